// The audit log (admins): every control action with the key that made it, newest first.
import { useState } from 'preact/hooks';
import { get } from '../api.js';
import { dateTime } from '../format.js';
import { useLoad } from '../hooks.js';
import { ErrorText, ScreenTitle, TableScroll } from '../screen.js';

export function AuditScreen() {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(() => get('/v1/audit', { query: { cursor, limit: 50 } }), cursor ?? '');
  return (
    <>
      <ScreenTitle title="Audit">Audit log</ScreenTitle>
      <ErrorText error={page.error} />
      {page.data && page.data.entries.length === 0 && <p class="empty">No actions yet.</p>}
      {page.data && page.data.entries.length > 0 && (
        <TableScroll label="Audit entries">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Key</th>
                <th scope="col">Role</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {page.data.entries.map((entry) => (
                <tr key={entry.id}>
                  <td>{dateTime(entry.at)}</td>
                  <td>{entry.keyName}</td>
                  <td>{entry.role}</td>
                  <th scope="row">{entry.action}</th>
                  <td class="mono">{entry.target}</td>
                  <td class="mono">{entry.detail === undefined ? '' : JSON.stringify(entry.detail)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <nav class="pager" aria-label="Pages">
        <button
          type="button"
          disabled={cursors.length === 1}
          onClick={() => setCursors(cursors.slice(0, -1))}
        >
          Newer entries
        </button>
        <button
          type="button"
          disabled={!page.data?.nextCursor}
          onClick={() => setCursors([...cursors, page.data?.nextCursor ?? undefined])}
        >
          Older entries
        </button>
      </nav>
    </>
  );
}
