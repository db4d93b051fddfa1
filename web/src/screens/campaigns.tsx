// Campaigns, newest first, each with its state word and how far it has come.
import { useLocation } from 'preact-iso';
import { get } from '../api.js';
import { dateTime } from '../format.js';
import { useLoad } from '../hooks.js';
import { ErrorText, ScreenTitle, TableScroll } from '../screen.js';
import { useCan } from '../session.js';

export function CampaignsScreen() {
  const list = useLoad(() => get('/v1/campaigns', { query: { limit: 100 } }), 'campaigns');
  const canCreate = useCan('operator');
  const { route } = useLocation();
  return (
    <>
      <ScreenTitle title="Campaigns">Campaigns</ScreenTitle>
      {canCreate && (
        <p>
          <button type="button" onClick={() => route('/console/campaigns/new')}>
            New campaign
          </button>
        </p>
      )}
      <ErrorText error={list.error} />
      {list.data && list.data.campaigns.length === 0 && <p class="empty">No campaigns yet.</p>}
      {list.data && list.data.campaigns.length > 0 && (
        <TableScroll label="Campaign list">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">State</th>
                <th scope="col">Contacts</th>
                <th scope="col">Done</th>
                <th scope="col">In flight</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {list.data.campaigns.map((campaign) => (
                <tr key={campaign.id}>
                  <th scope="row">
                    <a href={`/console/campaigns/${campaign.id}`}>{campaign.name}</a>
                  </th>
                  <td>
                    <span class={`state ${campaign.state}`}>{campaign.state}</span>
                  </td>
                  <td>{campaign.progress.contacts.total}</td>
                  <td>{campaign.progress.contacts.done}</td>
                  <td>{campaign.progress.inFlight}</td>
                  <td>{dateTime(campaign.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </>
  );
}
