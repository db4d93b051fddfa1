// Types of render.mjs, for the tests that import it.
export interface Instance {
  /** The instance's INSTANCE_ID, as media URLs name it. */
  name: string;
  /** HOST:PORT nginx reaches it at. */
  address: string;
  /** False: its /readyz did not answer 200 (rendered down for webhooks). */
  ready?: boolean;
}

export interface Site {
  /** PORT or ADDRESS:PORT; 80 by default. */
  listen?: number | string;
  serverName?: string;
  tls?: { certificate: string; certificateKey: string };
}

export function parseInstance(text: string): Instance;
export function generationOf(instances: readonly Instance[]): string;
export function renderBalancerConfig(instances: readonly Instance[], site?: Site): string;
export function probeReadiness(instances: readonly Instance[], timeoutMs?: number): Promise<Instance[]>;
export function writeAtomically(file: string, text: string): void;
export function syncReadiness(options: {
  instances: readonly Instance[];
  site?: Site;
  out: string;
  previous?: readonly Instance[];
  reload(): Promise<void>;
  timeoutMs?: number;
}): Promise<Instance[]>;
