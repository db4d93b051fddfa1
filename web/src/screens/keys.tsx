// API keys (admins): create one (its secret shown once), list them, delete one.
import { useState } from 'preact/hooks';
import { del, describe, get, post } from '../api.js';
import { dateTime } from '../format.js';
import { useLoad } from '../hooks.js';
import { ErrorText, ScreenTitle, TableScroll } from '../screen.js';
import type { ApiKey, Role } from '../types.js';

export function KeysScreen() {
  const list = useLoad(() => get('/v1/keys'), 'keys');
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [created, setCreated] = useState<(ApiKey & { key: string }) | null>(null);
  const [error, setError] = useState<string | null>(null);

  const create = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      setCreated(await post('/v1/keys', { body: { json: { name: name.trim(), role } } }));
      setName('');
      list.reload();
    } catch (err) {
      setError(describe(err));
    }
  };
  const remove = async (key: ApiKey) => {
    setError(null);
    try {
      await del('/v1/keys/{id}', { params: { id: key.id } });
      list.reload();
    } catch (err) {
      setError(describe(err));
    }
  };

  return (
    <>
      <ScreenTitle title="Keys">API keys</ScreenTitle>
      <form class="inline" onSubmit={create} aria-label="New key">
        <label for="key-name">Key name</label>
        <input
          id="key-name"
          required
          maxLength={100}
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <label for="key-role">Role</label>
        <select id="key-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
          <option value="viewer">viewer</option>
          <option value="operator">operator</option>
          <option value="admin">admin</option>
        </select>
        <button type="submit">Create key</button>
      </form>
      {created && (
        <div role="status" class="secret">
          <p>
            Key <strong>{created.name}</strong> ({created.role}) created. Copy it now: it is not shown again.
          </p>
          <output aria-label="New API key" class="mono">
            {created.key}
          </output>
        </div>
      )}
      <ErrorText error={error ?? list.error} />
      {list.data && (
        <TableScroll label="Keys">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.data.keys.map((key) => (
                <tr key={key.id}>
                  <th scope="row">{key.name}</th>
                  <td>{key.role}</td>
                  <td>{dateTime(key.createdAt)}</td>
                  <td>
                    <button
                      type="button"
                      class="danger"
                      aria-label={`Delete key ${key.name}`}
                      onClick={() => remove(key)}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </>
  );
}
