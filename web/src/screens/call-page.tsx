// One call: what it was, the timeline (the transcript region), the analysis, and the recording
// with both channels' waveforms and the turns marked.
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, url as apiUrl } from '../api.js';
import { bytes, clock, dateTime, offset } from '../format.js';
import { useLoad } from '../hooks.js';
import { ErrorText, ScreenTitle } from '../screen.js';
import { type TimelineItem, timelineOf, turnMarkers } from '../timeline.js';
import type { CallDetail } from '../types.js';

export function CallPageScreen({ callSid }: { callSid: string }) {
  const record = useLoad(() => get('/v1/calls/{callSid}', { params: { callSid } }), callSid);
  const call = record.data;
  return (
    <>
      <ScreenTitle title={`Call ${callSid}`}>
        Call <span class="mono">{callSid}</span>
      </ScreenTitle>
      <p>
        <a href="/console/calls">All calls</a>
      </p>
      <ErrorText error={record.error} />
      {call && (
        <>
          <CallFacts call={call} />
          <Recording call={call} />
          <section aria-labelledby="analysis-heading">
            <h2 id="analysis-heading">Analysis</h2>
            <Analysis call={call} />
          </section>
          <section aria-labelledby="transcript-heading" class="timeline">
            <h2 id="transcript-heading">Transcript</h2>
            <ol>
              {timelineOf(call).map((item, index) => (
                <TimelineRow key={index} item={item} />
              ))}
            </ol>
          </section>
        </>
      )}
    </>
  );
}

function CallFacts({ call }: { call: CallDetail }) {
  const campaign = call.outbound?.campaign;
  const facts: [string, preact.ComponentChildren][] = [
    ['Direction', call.direction],
    ['From', call.from],
    ['To', call.to],
    ['Carrier', call.carrier],
    ['Profile', call.profile],
    ['Started', dateTime(call.startedAt)],
    ['Duration', clock(call.durationMs)],
    ['Outcome', call.outcome],
    ['Ended by', call.endReason],
    ['Barge-ins', String(call.bargeIns)],
    ['First audio', call.latency.firstAudioMs === null ? '—' : `${call.latency.firstAudioMs} ms`],
    ['Instance', call.instance ?? '—'],
  ];
  if (campaign) facts.push(['Campaign', <a href={`/console/campaigns/${campaign}`}>{campaign}</a>]);
  if (call.outbound?.answeredBy) facts.push(['Answered by', call.outbound.answeredBy]);
  return (
    <dl class="facts">
      {facts.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function Recording({ call }: { call: CallDetail }) {
  const url = apiUrl('/v1/calls/{callSid}/recording', { params: { callSid: call.callSid } });
  const audio = useRef<HTMLAudioElement>(null);
  const wave = useRef<HTMLDivElement>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const recorded = call.recording !== undefined && call.recording.state !== 'deleted';

  useEffect(() => {
    if (!recorded || !audio.current || !wave.current) return;
    let undo: (() => void) | undefined;
    let gone = false;
    const media = audio.current;
    const container = wave.current;
    import('../widgets/waveform.js').then(
      ({ drawWaveform }) => {
        if (!gone) undo = drawWaveform(container, media, turnMarkers(call));
      },
      () => setProblem('The waveform could not be loaded.'),
    );
    return () => {
      gone = true;
      undo?.();
    };
  }, [call, recorded]);

  return (
    <section aria-labelledby="recording-heading">
      <h2 id="recording-heading">Recording</h2>
      {!recorded ? (
        <p class="empty">This call was not recorded.</p>
      ) : (
        <>
          <audio
            ref={audio}
            controls
            preload="metadata"
            src={url}
            aria-label="Call recording"
            onError={() => setProblem('The recording could not be played.')}
          />
          <div
            class="waveform"
            ref={wave}
            role="img"
            aria-label="Waveforms: the caller above, what the caller heard below; shaded spans are turns"
          />
          <p class="legend">
            <span class="swatch caller" aria-hidden="true" /> caller ·{' '}
            <span class="swatch agent" aria-hidden="true" /> what the caller heard ·{' '}
            {clock(call.recording!.durationMs)}, {bytes(call.recording!.bytes)}
            {call.recording!.pauses.length > 0 && ` · paused ${call.recording!.pauses.length}×`} ·{' '}
            <a href={url} download={`${call.callSid}.wav`}>
              Download recording
            </a>
          </p>
          <ErrorText error={problem} />
        </>
      )}
    </section>
  );
}

function Analysis({ call }: { call: CallDetail }) {
  const analysis = call.analysis;
  if (!analysis) return <p class="empty">No analysis for this call.</p>;
  if (analysis.outcome !== 'ok') {
    return (
      <p>
        Analysis {analysis.outcome}
        {analysis.reason ? `: ${analysis.reason}` : ''}
      </p>
    );
  }
  return (
    <dl class="facts">
      {analysis.summary && (
        <div class="wide">
          <dt>Summary</dt>
          <dd>{analysis.summary}</dd>
        </div>
      )}
      {analysis.sentiment && (
        <div>
          <dt>Sentiment</dt>
          <dd>
            {analysis.sentiment}
            {analysis.sentimentScore !== undefined && ` (${analysis.sentimentScore.toFixed(2)})`}
          </dd>
        </div>
      )}
      {analysis.topics && analysis.topics.length > 0 && (
        <div>
          <dt>Topics</dt>
          <dd>{analysis.topics.join(', ')}</dd>
        </div>
      )}
      {analysis.intents && analysis.intents.length > 0 && (
        <div>
          <dt>Intents</dt>
          <dd>{analysis.intents.join(', ')}</dd>
        </div>
      )}
    </dl>
  );
}

function TimelineRow({ item }: { item: TimelineItem }) {
  const at = <span class="at">{offset(item.atMs)}</span>;
  switch (item.kind) {
    case 'turn':
      return (
        <li class={`turn ${item.role}`}>
          {at}
          <span class="who">{item.role === 'caller' ? 'Caller' : 'Agent'}</span>
          <span class="text">{item.text}</span>
          {item.interrupted && <span class="tag">interrupted</span>}
          {item.latencyMs !== undefined && <span class="tag">replied in {item.latencyMs} ms</span>}
        </li>
      );
    case 'barge-in':
      return (
        <li class="mark">
          {at}
          <span class="who">Barge-in</span>
          <span class="text">the caller spoke over the agent</span>
        </li>
      );
    case 'dtmf':
      return (
        <li class="mark">
          {at}
          <span class="who">DTMF</span>
          <span class="text mono">{item.digits}</span>
        </li>
      );
    case 'function':
      return (
        <li class="mark">
          {at}
          <span class="who">Function</span>
          <span class="text">
            <code>
              {item.name}({item.arguments})
            </code>{' '}
            → {item.outcome} in {item.durationMs} ms
          </span>
        </li>
      );
    case 'event':
      return (
        <li class="mark">
          {at}
          <span class="who">Event</span>
          <span class="text">{item.label}</span>
        </li>
      );
    case 'end':
      return (
        <li class="mark end">
          {at}
          <span class="who">End</span>
          <span class="text">
            {item.reason} ({item.outcome})
          </span>
        </li>
      );
  }
}
