// New campaign: the campaign JSON's fields as a form. Empty fields take the server's defaults;
// the server names every field it refuses in one answer, shown as it is.
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { describe, post } from '../api.js';
import {
  type CampaignFields,
  campaignJson,
  EMPTY_CAMPAIGN,
  RETRY_ON,
  type RetryOn,
  type Weekday,
  WEEKDAYS,
} from '../campaign-form.js';
import { ErrorText, ScreenTitle } from '../screen.js';

type TextField = {
  [K in keyof CampaignFields]: CampaignFields[K] extends string ? K : never;
}[keyof CampaignFields];

type SetFields = (change: Partial<CampaignFields>) => void;

/** A fieldset of checkboxes choosing any of `options`, in the order they are ticked. */
function CheckList<T extends string>(props: {
  legend: string;
  options: readonly T[];
  chosen: T[];
  labelOf?: (option: T) => string;
  onChange: (chosen: T[]) => void;
}) {
  const { chosen, labelOf = (option: T) => option } = props;
  const toggle = (value: T, on: boolean) =>
    on ? [...chosen, value] : chosen.filter((item) => item !== value);
  return (
    <fieldset class="days">
      <legend>{props.legend}</legend>
      {props.options.map((option) => (
        <label key={option} class="check">
          <input
            type="checkbox"
            checked={chosen.includes(option)}
            onChange={(e) => props.onChange(toggle(option, e.currentTarget.checked))}
          />
          {labelOf(option)}
        </label>
      ))}
    </fieldset>
  );
}

/** What to do when a machine answers, and the voicemail to leave. */
function AnsweringMachineFields({ fields, set }: { fields: CampaignFields; set: SetFields }) {
  return (
    <fieldset>
      <legend>Answering machines</legend>
      <div>
        <label for="campaign-amd">When a machine answers</label>
        <select
          id="campaign-amd"
          value={fields.amdMode}
          onChange={(e) => set({ amdMode: e.currentTarget.value as CampaignFields['amdMode'] })}
        >
          <option value="">server default</option>
          <option value="off">do not detect</option>
          <option value="voicemail">leave a voicemail</option>
          <option value="hangup">hang up</option>
        </select>
      </div>
      <div class="wide">
        <label for="campaign-voicemail">Voicemail text</label>
        <textarea
          id="campaign-voicemail"
          rows={2}
          placeholder="Hi {{first_name}}, …"
          value={fields.voicemailText}
          onInput={(e) => set({ voicemailText: e.currentTarget.value })}
        />
      </div>
    </fieldset>
  );
}

export function NewCampaignScreen() {
  const [fields, setFields] = useState<CampaignFields>(EMPTY_CAMPAIGN);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const { route } = useLocation();

  const set: SetFields = (change) => setFields({ ...fields, ...change });
  const input = (name: TextField, label: string, props: Record<string, unknown> = {}) => (
    <div>
      <label for={`campaign-${name}`}>{label}</label>
      <input
        id={`campaign-${name}`}
        type="text"
        value={fields[name]}
        onInput={(e) => set({ [name]: e.currentTarget.value })}
        {...props}
      />
    </div>
  );

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const campaign = await post('/v1/campaigns', { body: { json: campaignJson(fields) } });
      route(`/console/campaigns/${campaign.id}`);
    } catch (err) {
      setError(describe(err));
      setBusy(false);
    }
  };

  return (
    <>
      <ScreenTitle title="New campaign">New campaign</ScreenTitle>
      <form class="campaign-form" onSubmit={submit}>
        <fieldset>
          <legend>Campaign</legend>
          {input('name', 'Name', { required: true, maxLength: 100 })}
          {input('profile', 'Profile', { placeholder: 'default' })}
          {input('carrier', 'Carrier', { placeholder: 'the default carrier' })}
          <div class="wide">
            <label for="campaign-from">Caller IDs</label>
            <textarea
              id="campaign-from"
              rows={2}
              placeholder="+15550100, +15550101"
              value={fields.from}
              onInput={(e) => set({ from: e.currentTarget.value })}
            />
          </div>
        </fieldset>
        <fieldset>
          <legend>Schedule</legend>
          {input('timezone', 'Time zone', { placeholder: 'UTC' })}
          <CheckList
            legend="Calling days"
            options={WEEKDAYS}
            chosen={fields.days}
            onChange={(days: Weekday[]) => set({ days })}
          />
          {input('start', 'Window start', { type: 'time' })}
          {input('end', 'Window end', { type: 'time' })}
        </fieldset>
        <fieldset>
          <legend>Pacing and retries</legend>
          {input('callsPerSecond', 'Calls per second', { type: 'number', min: 0.01, max: 100, step: 'any' })}
          {input('maxConcurrent', 'Most calls at once', { type: 'number', min: 1, max: 1000 })}
          {input('maxAttempts', 'Attempts per contact', { type: 'number', min: 1, max: 10 })}
          {input('delaySeconds', 'Seconds between attempts', { type: 'number', min: 0 })}
          <CheckList
            legend="Retry after"
            options={RETRY_ON}
            chosen={fields.retryOn}
            labelOf={(outcome) => outcome.replace('_', ' ')}
            onChange={(retryOn: RetryOn[]) => set({ retryOn })}
          />
        </fieldset>
        <AnsweringMachineFields fields={fields} set={set} />
        <fieldset>
          <legend>Breaker</legend>
          {input('failureShare', 'Failure share that pauses', {
            type: 'number',
            min: 0.01,
            max: 1,
            step: 'any',
          })}
          {input('windowSeconds', 'Over seconds', { type: 'number', min: 10, max: 3600 })}
          {input('minCalls', 'After at least calls', { type: 'number', min: 1 })}
        </fieldset>
        <fieldset>
          <legend>Recording</legend>
          <label class="check">
            <input
              type="checkbox"
              checked={fields.recording}
              onChange={(e) => set({ recording: e.currentTarget.checked })}
            />
            Record calls
          </label>
          {fields.recording &&
            input('consentText', 'Consent prompt', { placeholder: 'This call is recorded.' })}
        </fieldset>
        <ErrorText error={error} />
        <p>
          <button type="submit" disabled={busy}>
            Create
          </button>{' '}
          <a href="/console/campaigns">Back to campaigns</a>
        </p>
      </form>
    </>
  );
}
