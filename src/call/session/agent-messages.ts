// The agent's messages, each to the part of the call it concerns (docs/protocols/agent.md): a
// barge-in to the downlink, a reply's start and end to the downlink and the latency observer (held
// back with the audio while an answering machine decides), its words to the call log and the event
// feed, function calls to the functions, a refused injection to the endings.
import type { Logger } from 'pino';
import { readLatencyReport } from '../../agent/latency-report.js';
import type { AgentServerMessage } from '../../agent/protocol.js';
import type { AgentUpdater } from '../../agent/updates.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { AnsweringMachine } from '../outbound/answering-machine.js';
import type { CallLog } from '../record/call-log.js';
import type { Downlink } from '../downlink/downlink.js';
import type { Endings } from './endings.js';
import type { CallEventHub } from '../watch/events.js';
import type { FunctionCalls } from '../functions/function-calls.js';
import type { LatencyObserver } from './latency.js';

export interface AgentMessageParts {
  callSid: string;
  updater: AgentUpdater;
  downlink: Downlink;
  latency: LatencyObserver;
  /** Outbound calls with detection: holds the agent's output back until the verdict. */
  machine: AnsweringMachine | null;
  log: CallLog;
  endings: Endings;
  functions: FunctionCalls;
  metrics: Metrics;
  events: CallEventHub;
  logger: Logger;
}

export class AgentMessages {
  constructor(private readonly parts: AgentMessageParts) {}

  route(message: AgentServerMessage): void {
    const { updater, downlink, latency, machine, log, endings, functions, logger } = this.parts;
    // `SpeakUpdated`, `ThinkUpdated`, `ListenUpdated`: a function's update took effect.
    if (updater.onMessage(message)) return;
    switch (message.type) {
      case 'UserStartedSpeaking':
        this.parts.log.userSpeaking();
        this.#bargeIn();
        break;
      case 'AgentStartedSpeaking': {
        const started = () => {
          downlink.replyStarted();
          latency.agentStarted(message);
        };
        if (!this.#withheld(started, true)) started();
        break;
      }
      case 'AgentAudioDone': {
        const done = () => downlink.replyDone();
        if (!this.#withheld(done)) done();
        break;
      }
      case 'ConversationText': {
        const text = () => this.#conversationText(message.role, String(message.content ?? ''));
        // The agent's words wait with its audio; once a message is being left, its text is the record's.
        if (message.role !== 'assistant' || !(machine?.holdsText(text) ?? false)) text();
        break;
      }
      case 'LatencyReport':
        // The metric is observed by the agent session; the call keeps the figures in its record.
        log.agentTurnLatency(readLatencyReport(message as unknown as Record<string, unknown>));
        break;
      case 'InjectionRefused':
        logger.info(
          { reason: String(message.message ?? '').slice(0, 200) },
          'agent refused an injected message',
        );
        endings.injectionRefused();
        break;
      case 'FunctionCallRequest':
        functions.request(message.functions);
        break;
      case 'Error':
        // The link has closed the session; what happens next is decided when it is gone.
        logger.warn({ agentError: { code: message.code, description: message.description } }, 'agent error');
        break;
      case 'Warning':
        logger.info(
          { agentWarning: { code: message.code, description: message.description } },
          'agent warning',
        );
        break;
      default:
        break;
    }
  }

  /** Whether the answering machine keeps this step of the agent's output from the caller now. */
  #withheld(step: () => void, startsReply = false): boolean {
    const { machine } = this.parts;
    return machine !== null && machine.withholds(step, 0, startsReply);
  }

  #conversationText(role: string, content: string): void {
    if (role !== 'user' && role !== 'assistant') return;
    const { downlink, log, events, callSid, logger } = this.parts;
    if (role === 'assistant') downlink.replyText(content);
    log.turn(role, content);
    events.publish(callSid, { type: 'transcript', role, content });
    // The text itself only under `transcript`, which the logger keeps only when LOG_TRANSCRIPTS=on.
    logger.info({ turn: { role, chars: content.length }, transcript: { role, content } }, 'conversation');
  }

  #bargeIn(): void {
    // docs/protocols/agent.md: the carrier drops what it holds, and no more of the interrupted
    // reply is forwarded until the agent starts a new one.
    const { downlink, log, metrics, events, callSid } = this.parts;
    if (!downlink.bargeIn()) return;
    log.bargeIn();
    metrics.bargeIns.inc();
    events.publish(callSid, { type: 'barge-in' });
  }
}
