// How the example campaign ends (examples/contacts.csv with examples/do-not-call.csv, dialed on the
// simulated carrier's number plan): the final outcome of each contact, by phone as uploaded.
export const EXAMPLE_CAMPAIGN_OUTCOMES: Readonly<Record<string, string>> = {
  '+12125550100': 'completed',
  '+12125550101': 'completed',
  '+14155550112': 'completed',
  '+442079460018': 'completed',
  '+12125550125': 'completed',
  '+12125550131': 'completed',
  '+12125550130': 'dnc',
  '+12125550142': 'completed',
  '+12125550150': 'voicemail_left',
  '+12125550155': 'voicemail_left',
  '+12125550161': 'machine',
  '+12125550166': 'completed',
  '+12125550172': 'busy',
  '+12125550178': 'busy',
  '+12125550183': 'no_answer',
  '+12125550187': 'no_answer',
  '+12125550193': 'failed',
  '+12125550197': 'failed',
  '12345': 'invalid',
};
