// The do-not-call list: search it, add and remove numbers, upload a CSV of them.
import { useState } from 'preact/hooks';
import { del, describe, get, post } from '../api.js';
import { dateTime } from '../format.js';
import { useLoad } from '../hooks.js';
import { ErrorText, ScreenTitle, TableScroll } from '../screen.js';
import { useCan } from '../session.js';
import type { DncAdded } from '../types.js';

export function DncScreen() {
  const [search, setSearch] = useState('');
  const [q, setQ] = useState('');
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const list = useLoad(() => get('/v1/dnc', { query: { q, cursor, limit: 50 } }), `${q}|${cursor ?? ''}`);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const canChange = useCan('admin');

  const run = async (what: () => Promise<string>) => {
    setError(null);
    setMessage(null);
    try {
      setMessage(await what());
      list.reload();
    } catch (err) {
      setError(describe(err));
    }
  };

  return (
    <>
      <ScreenTitle title="Do not call">Do not call</ScreenTitle>
      <form
        class="inline"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          setCursor(undefined);
          // The list is searched by digits (a leading + allowed); spaces and dashes are dropped.
          setQ(search.trim().replace(/(?!^\+)[^\d]/g, ''));
        }}
      >
        <label for="dnc-search">Search numbers</label>
        <input
          id="dnc-search"
          type="search"
          value={search}
          onInput={(e) => setSearch(e.currentTarget.value)}
        />
        <button type="submit">Search</button>
      </form>
      {canChange && <DncChanges run={run} />}
      {message && <p role="status">{message}</p>}
      <ErrorText error={error ?? list.error} />
      {list.data && list.data.numbers.length === 0 && (
        <p class="empty">No numbers {q ? 'match' : 'listed'}.</p>
      )}
      {list.data && list.data.numbers.length > 0 && (
        <TableScroll label="Listed numbers">
          <table>
            <thead>
              <tr>
                <th scope="col">Number</th>
                <th scope="col">Added</th>
                {canChange && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {list.data.numbers.map((entry) => (
                <tr key={entry.number}>
                  <th scope="row">{entry.number}</th>
                  <td>{dateTime(entry.addedAt)}</td>
                  {canChange && (
                    <td>
                      <button
                        type="button"
                        class="danger"
                        aria-label={`Remove ${entry.number}`}
                        onClick={() =>
                          run(async () => {
                            await del('/v1/dnc/{number}', { params: { number: entry.number } });
                            return `Removed ${entry.number}.`;
                          })
                        }
                      >
                        Remove
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {list.data?.nextCursor && (
        <nav class="pager" aria-label="Pages">
          <button type="button" onClick={() => setCursor(list.data?.nextCursor ?? undefined)}>
            Next page
          </button>
        </nav>
      )}
    </>
  );
}

function uploadSummary(result: DncAdded): string {
  const rejected = result.rejected.map((r) => `row ${r.row}: ${r.reason}`).join('; ');
  return `Added ${result.added}, already listed ${result.alreadyListed}${rejected ? `, rejected ${result.rejected.length} (${rejected})` : ''}.`;
}

function DncChanges({ run }: { run: (what: () => Promise<string>) => Promise<void> }) {
  const [number, setNumber] = useState('');
  const [file, setFile] = useState<File | null>(null);
  return (
    <div class="dnc-changes">
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          void run(async () => {
            const result = await post('/v1/dnc', { body: { json: { numbers: [number.trim()] } } });
            setNumber('');
            return uploadSummary(result);
          });
        }}
      >
        <label for="dnc-add">Number to add</label>
        <input
          id="dnc-add"
          type="tel"
          required
          placeholder="+15550100"
          value={number}
          onInput={(e) => setNumber(e.currentTarget.value)}
        />
        <button type="submit">Add</button>
      </form>
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          if (file)
            void run(async () => uploadSummary(await post('/v1/dnc', { body: { csv: await file.text() } })));
        }}
      >
        <label for="dnc-file">Numbers CSV</label>
        <input
          id="dnc-file"
          type="file"
          accept=".csv,text/csv"
          required
          onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
        />
        <button type="submit" disabled={!file}>
          Upload numbers
        </button>
      </form>
    </div>
  );
}
