// Types of sync-deploy.mjs, for the test that checks the generated files.
import type { Instance } from '../deploy/nginx/render.mjs';

export const ROOT: string;
export const VM_EXAMPLE_INSTANCES: Instance[];
export const COMPOSE_INSTANCES: Instance[];
export function generatedFiles(root?: string): Array<{ path: string; content: string }>;
export function driftedFiles(root?: string): string[];
