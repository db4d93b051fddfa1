// The campaign service's checks at start: a profile changed since the contacts were added must not
// bring a placeholder with no value onto a live call.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentProfile } from '../../src/config/types.js';
import { CampaignService } from '../../src/outbound/service.js';
import { dialerRig, profileFixture, type Rig } from './rig.js';
import { DialPolicy } from '../../src/trust/dial-policy.js';
import { FetchPolicy } from '../../src/trust/fetch-policy.js';

let rig: Rig | null = null;
afterEach(async () => {
  await rig?.close();
  rig = null;
});

describe('starting a campaign', () => {
  it('checks every placeholder again: a greeting that gained one refuses the start, naming it', async () => {
    // Placeholders are checked at upload and again at start, never discovered on a live call.
    rig = await dialerRig();
    const profiles: Record<string, AgentProfile> = {
      default: profileFixture({ greeting: 'Hello {{first_name}}' }),
    };
    const service = new CampaignService({
      store: rig.store,
      profiles,
      defaultProfile: 'default',
      carriers: ['twilio'],
      logger: pino({ level: 'silent' }),
      clock: rig.clock,
      dialer: rig.dialers[0]!,
      dialPolicy: new DialPolicy(),
      fetchPolicy: new FetchPolicy(),
    });
    const { id } = await service.create({ name: 'renewals' });
    const added = await service.addContacts(id, {
      csv: 'phone,first_name,plan\n+12125550100,Ada,\n+12125550101,Alan,\n',
    });
    expect(added).toEqual({ added: 2, rejected: [] });

    // The operator edits the profile and restarts the server before starting the campaign.
    profiles.default = profileFixture({ greeting: 'Hello {{first_name}}, about your {{plan}} plan' });
    await expect(service.act(id, 'start')).rejects.toMatchObject({
      code: 'CALLBRIDGE_CONFLICT',
      message: `campaign ${id} cannot start: 2 contacts have no value for {{plan}} (used in the greeting)`,
    });
    expect((await rig.store.getCampaign(id))?.state).toBe('draft');

    profiles.default = profileFixture({ greeting: 'Hello {{first_name}}' });
    expect((await service.act(id, 'start')).state).toBe('running');
  });

  it('refuses a campaign whose profile is gone', async () => {
    rig = await dialerRig();
    const profiles: Record<string, AgentProfile> = { default: profileFixture(), sales: profileFixture() };
    const service = new CampaignService({
      store: rig.store,
      profiles,
      defaultProfile: 'default',
      carriers: ['twilio'],
      logger: pino({ level: 'silent' }),
      clock: rig.clock,
      dialer: rig.dialers[0]!,
      dialPolicy: new DialPolicy(),
      fetchPolicy: new FetchPolicy(),
    });
    const { id } = await service.create({ name: 'sales calls', profile: 'sales' });
    await service.addContacts(id, { json: [{ phone: '+12125550100' }] });
    delete profiles.sales;
    await expect(service.act(id, 'start')).rejects.toMatchObject({
      code: 'CALLBRIDGE_CONFLICT',
      message: `campaign ${id} uses profile "sales", which no longer exists`,
    });
  });
});

describe('adding contacts', () => {
  it('stores a large upload in batches, giving the event loop back between them, all rows accounted for', async () => {
    // Invariant: one upload never holds the event loop for the whole store write.
    rig = await dialerRig();
    const order: string[] = [];
    const store = Object.create(rig.store) as typeof rig.store;
    store.addContacts = async (...args) => {
      order.push(`batch of ${args[1].length}`);
      if (order.length === 1) setImmediate(() => order.push('queued callback'));
      return rig!.store.addContacts(...args);
    };
    const service = new CampaignService({
      store,
      profiles: { default: profileFixture() },
      defaultProfile: 'default',
      carriers: ['twilio'],
      logger: pino({ level: 'silent' }),
      clock: rig.clock,
      dialer: rig.dialers[0]!,
      dialPolicy: new DialPolicy(),
      fetchPolicy: new FetchPolicy(),
    });
    const { id } = await service.create({ name: 'large' });
    const phones = Array.from({ length: 250 }, (_, i) => `+1212555${String(i).padStart(4, '0')}`);
    const added = await service.addContacts(id, { csv: `phone\n${phones.join('\n')}\n${phones[0]}\n` });
    expect(added).toEqual({ added: 250, rejected: [{ row: 252, reason: 'duplicate of row 2' }] });
    expect(order).toEqual(['batch of 100', 'queued callback', 'batch of 100', 'batch of 50']);
    expect((await rig.store.contactTally(id)).callable).toBe(250);
  });
});
