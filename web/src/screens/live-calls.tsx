// Live calls across the deployment, kept current by the server-sent event stream, with the
// operator's controls: hang up, transfer, listen.
import { useEffect, useRef, useState } from 'preact/hooks';
import { describe, post } from '../api.js';
import { clock } from '../format.js';
import { type StreamState, useEventStream, useTick } from '../hooks.js';
import { ErrorText, ScreenTitle, TableScroll } from '../screen.js';
import { useCan } from '../session.js';
import type { LiveCall } from '../types.js';
import { type ListenProgress, ListenPlayer } from '../widgets/listen-player.js';
import { bytes } from '../format.js';

const STREAM_WORDS: Record<StreamState, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
};

export function LiveCallsScreen() {
  const [calls, setCalls] = useState<Map<string, LiveCall>>(new Map());
  const [error, setError] = useState<string | null>(null);
  const [listening, setListening] = useState<{ callSid: string; progress: ListenProgress } | null>(null);
  const player = useRef<ListenPlayer | null>(null);
  const canControl = useCan('operator');
  const now = useTick(1000);

  const stream = useEventStream(
    '/v1/calls/live/events',
    {},
    {
      snapshot: ({ calls: list }) => setCalls(new Map(list.map((call) => [call.callSid, call]))),
      started: (call) => upsert(call),
      updated: (call) => upsert(call),
      ended: ({ callSid }) => {
        setCalls((current) => {
          const next = new Map(current);
          next.delete(callSid);
          return next;
        });
      },
    },
  );
  function upsert(call: LiveCall) {
    setCalls((current) => new Map(current).set(call.callSid, call));
  }

  useEffect(() => () => player.current?.stop(), []);

  const act = async (what: () => Promise<unknown>) => {
    setError(null);
    try {
      await what();
    } catch (err) {
      setError(describe(err));
    }
  };

  const listen = (callSid: string) => {
    player.current?.stop();
    if (listening?.callSid === callSid && listening.progress.state !== 'ended') {
      player.current = null;
      setListening(null);
      return;
    }
    player.current = new ListenPlayer(callSid, (progress) => setListening({ callSid, progress }));
  };

  const sorted = [...calls.values()].sort((a, b) => b.startedAt.localeCompare(a.startedAt));
  return (
    <>
      <ScreenTitle title="Live calls">Live calls</ScreenTitle>
      <p class="stream-state" aria-live="polite">
        <span class={`dot ${stream}`} aria-hidden="true" /> {STREAM_WORDS[stream]} ·{' '}
        {sorted.length === 1 ? '1 call in progress' : `${sorted.length} calls in progress`}
      </p>
      <ErrorText error={error} />
      {listening && <ListenStatus callSid={listening.callSid} progress={listening.progress} />}
      {sorted.length === 0 ? (
        <p class="empty">
          No calls in progress. Place one with <code>npx callbridge call</code>.
        </p>
      ) : (
        <TableScroll label="Calls in progress">
          <table>
            <thead>
              <tr>
                <th scope="col">Call</th>
                {canControl && <th scope="col">Actions</th>}
                <th scope="col">From</th>
                <th scope="col">To</th>
                <th scope="col">Direction</th>
                <th scope="col">Carrier</th>
                <th scope="col">Time</th>
                <th scope="col">Campaign</th>
                <th scope="col">Instance</th>
              </tr>
            </thead>
            <tbody>
              {sorted.map((call) => (
                <tr key={call.callSid}>
                  <th scope="row" class="mono">
                    {call.callSid}
                  </th>
                  {canControl && (
                    <td>
                      <CallControls
                        call={call}
                        listening={
                          listening?.callSid === call.callSid && listening.progress.state !== 'ended'
                        }
                        onHangUp={() =>
                          act(() => post('/v1/calls/{callSid}/hangup', { params: { callSid: call.callSid } }))
                        }
                        onTransfer={(to) =>
                          act(() =>
                            post('/v1/calls/{callSid}/transfer', {
                              params: { callSid: call.callSid },
                              body: { json: { to } },
                            }),
                          )
                        }
                        onListen={() => listen(call.callSid)}
                      />
                    </td>
                  )}
                  <td>{call.from}</td>
                  <td>{call.to}</td>
                  <td>{call.direction}</td>
                  <td>{call.carrier}</td>
                  <td>{clock(now - Date.parse(call.startedAt))}</td>
                  <td>
                    {call.campaign ? (
                      <a href={`/console/campaigns/${call.campaign}`}>{call.campaign}</a>
                    ) : (
                      '—'
                    )}
                  </td>
                  <td>{call.instance}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </>
  );
}

function CallControls(props: {
  call: LiveCall;
  listening: boolean;
  onHangUp: () => void;
  onTransfer: (to: string) => void;
  onListen: () => void;
}) {
  const [to, setTo] = useState('');
  const id = `transfer-${props.call.callSid}`;
  return (
    <div class="controls">
      <button type="button" class="danger" onClick={props.onHangUp}>
        Hang up
      </button>
      <button type="button" aria-pressed={props.listening} onClick={props.onListen}>
        Listen
      </button>
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          props.onTransfer(to.trim());
        }}
      >
        <label class="visually-hidden" for={id}>
          Transfer to number
        </label>
        <input
          id={id}
          type="tel"
          placeholder="+15550100"
          required
          pattern="\+[1-9][0-9]{6,14}|sips?:.+"
          value={to}
          onInput={(e) => setTo(e.currentTarget.value)}
        />
        <button type="submit">Transfer</button>
      </form>
    </div>
  );
}

function ListenStatus({ callSid, progress }: { callSid: string; progress: ListenProgress }) {
  const words: Record<ListenProgress['state'], string> = {
    connecting: `Connecting to ${callSid}…`,
    playing: `Listening to ${callSid}`,
    ended: `The call ${callSid} ended`,
    failed: `Listening to ${callSid} stopped: ${progress.message ?? 'failed'}`,
  };
  return (
    <p role="status" class="listen-status">
      {words[progress.state]} · {bytes(progress.bytes)} of audio received in {progress.chunks} chunks
    </p>
  );
}
