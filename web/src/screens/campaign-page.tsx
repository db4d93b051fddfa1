// One campaign: its state, its controls, the contacts upload with the rows refused and why, and
// its progress as the server's progress stream moves it.
import { useState } from 'preact/hooks';
import { describe, get, post, url } from '../api.js';
import { dateTime } from '../format.js';
import { useEventStream, useLoad } from '../hooks.js';
import { ErrorText, ScreenTitle, TableScroll } from '../screen.js';
import { useCan } from '../session.js';
import type { Campaign, CampaignProgressEvent, CampaignState, ContactsAdded } from '../types.js';
import { PaceChart, type PaceSample } from '../widgets/pace-chart.js';

type Action = 'start' | 'pause' | 'resume' | 'cancel';
const ACTIONS: { action: Action; label: string; from: CampaignState[] }[] = [
  { action: 'start', label: 'Start', from: ['draft'] },
  { action: 'pause', label: 'Pause', from: ['running'] },
  { action: 'resume', label: 'Resume', from: ['paused'] },
  { action: 'cancel', label: 'Cancel', from: ['draft', 'running', 'paused'] },
];
const ACTION_PATHS = {
  start: '/v1/campaigns/{id}/start',
  pause: '/v1/campaigns/{id}/pause',
  resume: '/v1/campaigns/{id}/resume',
  cancel: '/v1/campaigns/{id}/cancel',
} as const satisfies Record<Action, string>;
const FINISHED: CampaignState[] = ['completed', 'cancelled'];
/** Samples kept for the chart: ten minutes at one a second. */
const MAX_SAMPLES = 600;

export function CampaignPageScreen({ id }: { id: string }) {
  const params = { id };
  const loaded = useLoad(() => get('/v1/campaigns/{id}', { params }), id);
  const [live, setLive] = useState<CampaignProgressEvent | null>(null);
  const [samples, setSamples] = useState<PaceSample[]>([]);
  const [error, setError] = useState<string | null>(null);
  const canControl = useCan('operator');
  const campaign: Campaign | undefined = live ?? loaded.data;
  const finished = campaign !== undefined && FINISHED.includes(campaign.state);

  const following = loaded.data && !FINISHED.includes(loaded.data.state);
  useEventStream(following ? '/v1/campaigns/{id}/events' : null, params, {
    progress: (event) => {
      setLive(event);
      setSamples((current) =>
        [
          ...current,
          {
            atS: Date.now() / 1000,
            dialRate: event.dialRate,
            pace: event.progress.pace.set,
            inFlight: event.progress.inFlight,
          },
        ].slice(-MAX_SAMPLES),
      );
    },
  });

  const act = async (action: Action) => {
    setError(null);
    try {
      const next = await post(ACTION_PATHS[action], { params });
      setLive(live ? { ...live, ...next } : null);
      // A finished campaign's stream closes with it.
      loaded.set(next);
    } catch (err) {
      setError(describe(err));
    }
  };

  return (
    <>
      <ScreenTitle title={campaign ? `Campaign ${campaign.name}` : 'Campaign'}>
        {campaign ? `Campaign ${campaign.name}` : 'Campaign'}
      </ScreenTitle>
      <p>
        <a href="/console/campaigns">All campaigns</a>
      </p>
      <ErrorText error={loaded.error} />
      {campaign && (
        <>
          <p class="campaign-state" role="status">
            State: <strong class={`state ${campaign.state}`}>{campaign.state}</strong>
            {campaign.pause && campaign.state === 'paused' && (
              <span>
                {' '}
                (paused by {campaign.pause.by}: {campaign.pause.reason})
              </span>
            )}
          </p>
          {canControl && (
            <div class="controls" role="group" aria-label="Campaign controls">
              {ACTIONS.filter((a) => a.from.includes(campaign.state)).map((a) => (
                <button
                  key={a.action}
                  type="button"
                  class={a.action === 'cancel' ? 'danger' : ''}
                  onClick={() => act(a.action)}
                >
                  {a.label}
                </button>
              ))}
            </div>
          )}
          <ErrorText error={error} />
          <Progress campaign={campaign} dialRate={live?.dialRate ?? null} samples={samples} />
          {canControl && !finished && <UploadContacts id={id} onUploaded={loaded.reload} />}
          <section aria-labelledby="results-heading">
            <h2 id="results-heading">Results</h2>
            <p>
              <a
                href={url('/v1/campaigns/{id}/results.csv', { params })}
                download={`results-${campaign.id}.csv`}
              >
                Results CSV
              </a>{' '}
              · created {dateTime(campaign.createdAt)}
              {campaign.startedAt && `, started ${dateTime(campaign.startedAt)}`}
              {campaign.endedAt && `, ended ${dateTime(campaign.endedAt)}`}
            </p>
          </section>
        </>
      )}
    </>
  );
}

function Progress(props: { campaign: Campaign; dialRate: number | null; samples: PaceSample[] }) {
  const { progress } = props.campaign;
  const outcomes = Object.entries(progress.outcomes).filter(([, n]) => n > 0);
  return (
    <section aria-labelledby="progress-heading">
      <h2 id="progress-heading">Progress</h2>
      <dl class="facts">
        <div>
          <dt>Contacts</dt>
          <dd>{progress.contacts.total}</dd>
        </div>
        <div>
          <dt>Pending</dt>
          <dd>{progress.contacts.pending}</dd>
        </div>
        <div>
          <dt>Dialing</dt>
          <dd>{progress.contacts.dialing}</dd>
        </div>
        <div>
          <dt>Waiting to retry</dt>
          <dd>{progress.contacts.retry}</dd>
        </div>
        <div>
          <dt>Done</dt>
          <dd>{progress.contacts.done}</dd>
        </div>
        <div>
          <dt>Calls in flight</dt>
          <dd>{progress.inFlight}</dd>
        </div>
        <div>
          <dt>Dial rate</dt>
          <dd>
            {props.dialRate === null ? `${progress.pace.achieved}` : props.dialRate.toFixed(2)} / s of{' '}
            {progress.pace.set} / s set
          </dd>
        </div>
        {progress.etaSeconds !== null && (
          <div>
            <dt>Time left</dt>
            <dd>about {Math.ceil(progress.etaSeconds / 60)} min</dd>
          </div>
        )}
      </dl>
      <h3>Outcomes</h3>
      {outcomes.length === 0 ? (
        <p class="empty">No final outcomes yet.</p>
      ) : (
        <ul class="outcomes">
          {outcomes.map(([outcome, n]) => (
            <li key={outcome}>
              {outcome.replace('_', ' ')}: <strong>{n}</strong>
            </li>
          ))}
        </ul>
      )}
      {props.samples.length > 1 && <PaceChart samples={props.samples} />}
    </section>
  );
}

function UploadContacts({ id, onUploaded }: { id: string; onUploaded: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [result, setResult] = useState<ContactsAdded | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!file) return;
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      setResult(
        await post('/v1/campaigns/{id}/contacts', { params: { id }, body: { csv: await file.text() } }),
      );
      onUploaded();
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="contacts-heading">
      <h2 id="contacts-heading">Contacts</h2>
      <form class="inline" onSubmit={submit}>
        <label for="contacts-file">Contacts CSV</label>
        <input
          id="contacts-file"
          type="file"
          accept=".csv,text/csv"
          required
          onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
        />
        <button type="submit" disabled={busy || !file}>
          Upload contacts
        </button>
      </form>
      <ErrorText error={error} />
      {result && (
        <div role="status">
          <p>
            Added {result.added} {result.added === 1 ? 'contact' : 'contacts'}
            {result.rejected.length > 0
              ? `; ${result.rejected.length} ${result.rejected.length === 1 ? 'row' : 'rows'} rejected.`
              : '.'}
          </p>
          {result.rejected.length > 0 && (
            <TableScroll label="Rejected rows">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Row</th>
                    <th scope="col">Reason</th>
                  </tr>
                </thead>
                <tbody>
                  {result.rejected.map((row) => (
                    <tr key={row.row}>
                      <td>{row.row}</td>
                      <td>{row.reason}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          )}
        </div>
      )}
    </section>
  );
}
