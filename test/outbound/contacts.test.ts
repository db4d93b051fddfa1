// Contacts as uploaded: phone numbers, time zones, variables and placeholders, row by row.
import { describe, expect, it } from 'vitest';
import { contactsFromCsv, contactsFromJson } from '../../src/outbound/contacts-import.js';
import { nanpZone } from '../../src/outbound/nanp-zones.js';
import { normalizePhone } from '../../src/outbound/phone.js';
import {
  missingVariablesProblem,
  placeholders,
  renderTemplate,
  requiredVariables,
} from '../../src/outbound/template.js';
import { ianaZone, zoneOfNumber } from '../../src/outbound/timezone.js';
import { campaignSpecFixture } from './fixtures.js';
import { profileFixture } from './rig.js';

const context = { campaignTimezone: 'Europe/London', required: new Map<string, string[]>() };

describe('phone numbers', () => {
  it('takes E.164, or a national number with its country', async () => {
    expect(normalizePhone('+1 (212) 555-0142')).toEqual({
      ok: true,
      e164: '+12125550142',
      country: 'US',
      nationalNumber: '2125550142',
    });
    expect(normalizePhone('020 7946 0958', 'gb')).toMatchObject({
      ok: true,
      e164: '+442079460958',
      country: 'GB',
    });
    expect(normalizePhone('+81 3-1234-5600')).toMatchObject({ ok: true, country: 'JP' });
  });

  it('refuses what is not a number one can dial, saying why', async () => {
    const reason = (raw: string, country?: string) => {
      const result = normalizePhone(raw, country);
      return result.ok ? 'ok' : result.reason;
    };
    expect(reason('')).toBe('phone is empty');
    expect(reason('   ')).toBe('phone is empty');
    expect(reason('2125550142')).toMatch(/^phone is not in E.164/);
    expect(reason('2125550142', 'XX')).toBe('country is not an ISO 3166 country code');
    expect(reason('2125550142', 'USA')).toBe('country is not an ISO 3166 country code');
    expect(reason('+1999555010')).toBe('phone is not a valid number');
    expect(reason('+12125550142 ext. 12')).toBe('phone is not a valid number');
    expect(reason('+4420794609581234')).toBe('phone is not a valid number');
    expect(reason('not a number')).toMatch(/^phone is not in E.164/);
    expect(reason('+1212555\u00000142')).toBe('phone is not a phone number');
    expect(reason(`+1${'2'.repeat(60)}`)).toBe('phone is not a phone number');
  });
});

describe('time zones', () => {
  it('accepts IANA names in their canonical spelling and refuses offsets and inventions', async () => {
    expect(ianaZone('america/new_york')).toBe('America/New_York');
    expect(ianaZone('UTC')).toBe('UTC');
    expect(ianaZone('Mars/Olympus')).toBeNull();
    expect(ianaZone('+03:00')).toBeNull();
    expect(ianaZone('UTC+3')).toBeNull();
    expect(ianaZone('')).toBeNull();
    expect(ianaZone('../../etc/passwd')).toBeNull();
  });

  it('derives a zone from a one-zone country, from a US or Canadian area code, and gives none otherwise', async () => {
    expect(zoneOfNumber('GB', '2079460958')).toBe('Europe/London');
    expect(zoneOfNumber('JP', '312345600')).toBe('Asia/Tokyo');
    expect(zoneOfNumber('US', '2125550142')).toBe('America/New_York');
    expect(zoneOfNumber('US', '4155550142')).toBe('America/Los_Angeles');
    expect(zoneOfNumber('US', '3125550142')).toBe('America/Chicago');
    expect(zoneOfNumber('US', '6025550142')).toBe('America/Phoenix');
    expect(zoneOfNumber('CA', '4165550142')).toBe('America/Toronto');
    expect(zoneOfNumber('CA', '6045550142')).toBe('America/Vancouver');
    // Straddles a zone boundary (the Florida panhandle): no guess.
    expect(zoneOfNumber('US', '8505550142')).toBeNull();
    expect(zoneOfNumber('US', '8005550142')).toBeNull();
    // Several zones and no table: Brazil, Australia, Spain with the Canaries.
    expect(zoneOfNumber('BR', '11912345678')).toBeNull();
    expect(zoneOfNumber('AU', '491570156')).toBeNull();
    expect(zoneOfNumber('ES', '912345678')).toBeNull();
    expect(zoneOfNumber(null, '2125550142')).toBeNull();
  });

  it('lists each NANP area code once, in a valid zone', async () => {
    for (const code of ['212', '305', '404', '617', '713', '303', '702', '907', '808', '514', '403', '902']) {
      expect(ianaZone(nanpZone(`${code}5550100`) ?? '')).not.toBeNull();
    }
  });
});

describe('placeholders', () => {
  it('finds names, renders values and refuses a placeholder with no value', async () => {
    expect(placeholders('Hi {{first_name}}, {{ first_name }} and {{plan}}; {{not valid}} {x}')).toEqual([
      'first_name',
      'plan',
    ]);
    expect(renderTemplate('Hi {{ first_name }}!', { first_name: ' Ada ' })).toBe('Hi Ada!');
    expect(() =>
      renderTemplate('Hi {{first_name}} about {{plan}}', { first_name: 'Ada', plan: ' ' }),
    ).toThrow('no value for {{plan}}');
    // A value that looks like a placeholder is not expanded again.
    expect(renderTemplate('{{a}}', { a: '{{b}}', b: 'x' })).toBe('{{b}}');
  });

  it('collects the placeholders of the prompt, greeting and voicemail with where each is used', async () => {
    const required = requiredVariables(
      campaignSpecFixture({
        amd: { mode: 'voicemail', voicemail: { text: 'Hi {{first_name}}, call {{office}}' } },
      }),
      profileFixture({ prompt: 'Speak to {{first_name}}.', greeting: 'Hello {{first_name}}' }),
    );
    expect([...required]).toEqual([
      ['first_name', ['prompt', 'greeting', 'voicemail']],
      ['office', ['voicemail']],
    ]);
    expect(missingVariablesProblem(required, { first_name: 'Ada' })).toBe(
      'no value for {{office}} (used in the voicemail)',
    );
    expect(missingVariablesProblem(required, { first_name: 'Ada', office: 'Harbour St' })).toBeNull();
  });
});

describe('contacts from CSV', () => {
  it('adds every good row with its variables and zone, and rejects the others with row and reason', async () => {
    const csv = [
      'Phone,first_name,country,timezone,plan',
      '+12125550100,Ada,,,gold',
      '020 7946 0958,Grace,GB,,',
      '+12125550101,Alan,,Europe/Paris,silver',
      '+12125550100,Ada again,,,',
      '12345,Bad,,,',
      '+12125550102,Zone,,Mars/Base,',
      '+12125550103,Short row',
      '"+12125550104","Quoted, with comma",,,"multi',
      'line"',
      '',
    ].join('\n');
    const result = await contactsFromCsv(csv, context);
    expect(result.rejected).toEqual([
      { row: 5, reason: 'duplicate of row 2' },
      { row: 6, reason: 'phone is not in E.164 (+ and the country code); add a country column' },
      { row: 7, reason: 'timezone is not an IANA time zone, like Europe/Paris' },
      { row: 8, reason: 'has 2 fields, the header has 5' },
    ]);
    expect(result.contacts.map((c) => [c.row, c.phone, c.timezone, c.invalid])).toEqual([
      [2, '+12125550100', 'America/New_York', null],
      [3, '+442079460958', 'Europe/London', null],
      [4, '+12125550101', 'Europe/Paris', null],
      [6, '12345', 'Europe/London', 'phone is not in E.164 (+ and the country code); add a country column'],
      [9, '+12125550104', 'America/New_York', null],
    ]);
    expect(result.contacts[0]!.variables).toEqual({ first_name: 'Ada', plan: 'gold' });
    expect(result.contacts[4]!.variables).toEqual({ first_name: 'Quoted, with comma', plan: 'multi\nline' });
  });

  it('reads semicolon-separated files and a byte-order mark', async () => {
    const result = await contactsFromCsv('\uFEFFphone;name\r\n+12125550100;Ada\r\n', context);
    expect(result.contacts.map((c) => [c.phone, c.variables])).toEqual([['+12125550100', { name: 'Ada' }]]);
  });

  it('refuses a row with no value for a placeholder the campaign uses', async () => {
    const required = new Map([['first_name', ['greeting']]]);
    const result = await contactsFromCsv(
      'phone,first_name\n+12125550100,Ada\n+12125550101,\n+12125550102, \n',
      {
        ...context,
        required,
      },
    );
    expect(result.contacts.map((c) => c.phone)).toEqual(['+12125550100']);
    expect(result.rejected).toEqual([
      { row: 3, reason: 'no value for {{first_name}} (used in the greeting)' },
      { row: 4, reason: 'no value for {{first_name}} (used in the greeting)' },
    ]);
  });

  it.each([
    ['an empty body', '', 'contacts CSV: empty; the first row names the columns'],
    ['no phone column', 'number,name\n+12125550100,Ada\n', 'contacts CSV: the header has no phone column'],
    ['a column named twice', 'phone,name,name\n', 'contacts CSV: the header names "name" twice'],
    ['a column with no name', 'phone,,name\n', 'contacts CSV: header column 2: has no name'],
    [
      'a quote never closed',
      'phone,name\n+12125550100,"Ada\n',
      'contacts CSV: a quoted field is never closed at line 2',
    ],
    [
      'text after a closing quote',
      'phone,name\n"+12125550100"x,Ada\n',
      'contacts CSV: a closing quote is followed by text at line 2',
    ],
    [
      'too many columns',
      `phone,${Array.from({ length: 60 }, (_, i) => `c${i}`).join(',')}\n`,
      'contacts CSV: more than 50 columns',
    ],
  ])('refuses %s as a whole', async (_, csv, message) => {
    await expect(contactsFromCsv(csv, context)).rejects.toThrow(message);
  });

  it('refuses more rows than one upload takes', async () => {
    const csv = `phone\n${'+12125550100\n'.repeat(50_001)}`;
    await expect(contactsFromCsv(csv, context)).rejects.toThrow('contacts CSV: more than 50000 rows');
  });

  it('refuses a value that is too long, naming the column', async () => {
    const result = await contactsFromCsv(`phone,note\n+12125550100,${'x'.repeat(1_001)}\n`, context);
    expect(result.rejected).toEqual([{ row: 2, reason: 'note is longer than 1000 characters' }]);
  });
});

describe('contacts from JSON', () => {
  it('takes an array of objects, numbers and booleans as text, null as absent', async () => {
    const result = await contactsFromJson(
      [
        { phone: '+12125550100', first_name: 'Ada', vip: true, visits: 3, note: null },
        { Phone: '+12125550101' },
        'not an object',
        [],
        { phone: '+12125550102', nested: { a: 1 } },
        { name: 'no phone' },
        { phone: 12125550103 },
      ],
      context,
    );
    expect(result.contacts.map((c) => [c.phone, c.variables, c.invalid === null])).toEqual([
      ['+12125550100', { first_name: 'Ada', vip: 'true', visits: '3' }, true],
      ['+12125550101', {}, true],
      // Kept to show as `invalid` in the results.
      ['12125550103', {}, false],
    ]);
    expect(result.rejected).toEqual([
      { row: 3, reason: 'must be an object with a phone field' },
      { row: 4, reason: 'must be an object with a phone field' },
      { row: 5, reason: 'nested must be text, a number or true/false' },
      { row: 6, reason: 'phone is missing' },
      { row: 7, reason: 'phone is not in E.164 (+ and the country code); add a country column' },
    ]);
  });

  it('refuses a body that is not an array', async () => {
    for (const body of [{}, 'text', null, 3]) {
      await expect(contactsFromJson(body, context)).rejects.toThrow(
        'contacts: the body must be a JSON array of objects, or text/csv',
      );
    }
  });
});
