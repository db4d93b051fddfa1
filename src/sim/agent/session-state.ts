// The states of one local agent session and the moves between them (docs/protocols/agent.md section 3:
// open → Welcome → Settings → SettingsApplied → audio). Everything before `live` drops audio.
export const SessionState = Object.freeze({
  AwaitingSettings: 'awaiting-settings',
  Live: 'live',
  Ended: 'ended',
} as const);

export type SessionStateName = (typeof SessionState)[keyof typeof SessionState];

const NEXT: Readonly<Record<SessionStateName, readonly SessionStateName[]>> = Object.freeze({
  'awaiting-settings': Object.freeze(['live', 'ended'] as const),
  live: Object.freeze(['ended'] as const),
  ended: Object.freeze([] as const),
});

export function canTransition(from: SessionStateName, to: SessionStateName): boolean {
  return NEXT[from].includes(to);
}
