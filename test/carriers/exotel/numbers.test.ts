import { describe, expect, it } from 'vitest';
import { exotelE164 } from '../../../src/carriers/exotel/numbers.js';

describe('exotelE164', () => {
  it('reads numbers as Exotel writes them into E.164, for number routing', () => {
    expect(exotelE164('09876543210')).toBe('+919876543210');
    expect(exotelE164('08012345678')).toBe('+918012345678');
    expect(exotelE164('919876543210')).toBe('+919876543210');
    expect(exotelE164('9876543210')).toBe('+919876543210');
    expect(exotelE164('+6591234567')).toBe('+6591234567');
  });

  it('keeps what is not a valid number as written', () => {
    for (const value of ['', 'anonymous', '123', '0'.repeat(40), '+1']) expect(exotelE164(value)).toBe(value);
  });
});
