// Call history with the filters the API takes; the filters live in the address, so a filtered
// list can be bookmarked and the back button works.
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { get, query } from '../api.js';
import { clock, dateTime, isoToLocal, localToIso } from '../format.js';
import { useLoad } from '../hooks.js';
import type { CallRecord, LiveCall } from '../types.js';
import { ErrorText, ScreenTitle, TableScroll } from '../screen.js';

const FILTERS = [
  'since',
  'until',
  'direction',
  'carrier',
  'profile',
  'outcome',
  'campaign',
  'number',
] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;
const CARRIERS = ['twilio', 'telnyx', 'plivo', 'vonage', 'exotel'];
const PAGE_SIZE = 25;

/** The listing holds records; live calls come only with `live=true`, which this screen never asks. */
const isRecord = (call: CallRecord | LiveCall): call is CallRecord => 'endedAt' in call;

export function CallsScreen() {
  const { query: params, route } = useLocation();
  const filters: Filters = Object.fromEntries(FILTERS.map((name) => [name, params[name]]));
  const cursor = params.cursor;
  const key = JSON.stringify({ filters, cursor });
  const page = useLoad(() => get('/v1/calls', { query: { ...filters, cursor, limit: PAGE_SIZE } }), key);
  // Cursors of the pages before this one, for "Previous page".
  const [earlier, setEarlier] = useState<(string | undefined)[]>([]);

  const go = (next: Filters, nextCursor: string | undefined) =>
    route(`/console/calls${query({ ...next, cursor: nextCursor })}`);

  return (
    <>
      <ScreenTitle title="Calls">Calls</ScreenTitle>
      <CallFilters
        initial={filters}
        onApply={(next) => {
          setEarlier([]);
          go(next, undefined);
        }}
      />
      <ErrorText error={page.error} />
      {page.data && page.data.calls.length === 0 && <p class="empty">No calls match.</p>}
      {page.data && page.data.calls.length > 0 && (
        <TableScroll label="Call history">
          <table>
            <thead>
              <tr>
                <th scope="col">Call</th>
                <th scope="col">Started</th>
                <th scope="col">Direction</th>
                <th scope="col">From</th>
                <th scope="col">To</th>
                <th scope="col">Carrier</th>
                <th scope="col">Profile</th>
                <th scope="col">Duration</th>
                <th scope="col">Outcome</th>
                <th scope="col">Ended by</th>
              </tr>
            </thead>
            <tbody>
              {page.data.calls.filter(isRecord).map((call) => (
                <tr key={call.callSid}>
                  <th scope="row" class="mono">
                    <a href={`/console/calls/${encodeURIComponent(call.callSid)}`}>{call.callSid}</a>
                  </th>
                  <td>{dateTime(call.startedAt)}</td>
                  <td>{call.direction}</td>
                  <td>{call.from}</td>
                  <td>{call.to}</td>
                  <td>{call.carrier}</td>
                  <td>{call.profile}</td>
                  <td>{clock(call.durationMs)}</td>
                  <td>{call.outcome}</td>
                  <td>{call.endReason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <nav class="pager" aria-label="Pages">
        <button
          type="button"
          disabled={earlier.length === 0}
          onClick={() => {
            const previous = earlier[earlier.length - 1];
            setEarlier(earlier.slice(0, -1));
            go(filters, previous);
          }}
        >
          Previous page
        </button>
        <button
          type="button"
          disabled={!page.data?.nextCursor}
          onClick={() => {
            setEarlier([...earlier, cursor]);
            go(filters, page.data?.nextCursor ?? undefined);
          }}
        >
          Next page
        </button>
      </nav>
    </>
  );
}

function CallFilters({ initial, onApply }: { initial: Filters; onApply: (filters: Filters) => void }) {
  const [values, setValues] = useState<Filters>(initial);
  const field = (name: keyof Filters) => ({
    id: `filter-${name}`,
    name,
    value: values[name] ?? '',
    onInput: (e: { currentTarget: { value: string } }) =>
      setValues({ ...values, [name]: e.currentTarget.value }),
  });
  return (
    <form
      class="filters"
      aria-label="Filters"
      onSubmit={(event) => {
        event.preventDefault();
        onApply(values);
      }}
    >
      <div>
        <label for="filter-since">Started after</label>
        <input
          id="filter-since"
          type="datetime-local"
          value={isoToLocal(values.since)}
          onInput={(e) => setValues({ ...values, since: localToIso(e.currentTarget.value) })}
        />
      </div>
      <div>
        <label for="filter-until">Started before</label>
        <input
          id="filter-until"
          type="datetime-local"
          value={isoToLocal(values.until)}
          onInput={(e) => setValues({ ...values, until: localToIso(e.currentTarget.value) })}
        />
      </div>
      <div>
        <label for="filter-direction">Direction</label>
        <select {...field('direction')}>
          <option value="">any</option>
          <option value="inbound">inbound</option>
          <option value="outbound">outbound</option>
        </select>
      </div>
      <div>
        <label for="filter-carrier">Carrier</label>
        <select {...field('carrier')}>
          <option value="">any</option>
          {CARRIERS.map((carrier) => (
            <option key={carrier} value={carrier}>
              {carrier}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for="filter-profile">Profile</label>
        <input type="text" {...field('profile')} />
      </div>
      <div>
        <label for="filter-outcome">Outcome</label>
        <select {...field('outcome')}>
          <option value="">any</option>
          <option value="completed">completed</option>
          <option value="failed">failed</option>
        </select>
      </div>
      <div>
        <label for="filter-campaign">Campaign</label>
        <input type="text" {...field('campaign')} />
      </div>
      <div>
        <label for="filter-number">Number</label>
        <input type="tel" placeholder="+15550100" {...field('number')} />
      </div>
      <div class="filter-actions">
        <button type="submit">Search</button>
        <button
          type="button"
          class="quiet"
          onClick={() => {
            setValues({});
            onApply({});
          }}
        >
          Clear filters
        </button>
      </div>
    </form>
  );
}
