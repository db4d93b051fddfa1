// Every simulated carrier is registered once under its own name, and the call command and the
// bench both find it there.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DIALECT,
  dialectNames,
  findDialect,
  SIM_DIALECTS,
} from '../../../../src/sim/carrier/dialects/index.js';

describe('simulated carrier registry', () => {
  it('names each dialect once, Twilio the default', () => {
    const names = dialectNames();
    expect(new Set(names).size).toBe(names.length);
    expect(names).toContain('twilio');
    expect(DEFAULT_DIALECT.name).toBe('twilio');
    for (const dialect of SIM_DIALECTS) {
      expect(dialect.name).toMatch(/^[a-z][a-z0-9-]*$/);
      expect(findDialect(dialect.name)).toBe(dialect);
    }
    expect(findDialect('pigeon')).toBeUndefined();
  });
});
