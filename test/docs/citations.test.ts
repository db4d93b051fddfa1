// Every citation of this repository's documentation resolves: a comment or a page that names a page
// (and a numbered section of it) points at a file and a heading that exist, so readers following a
// citation never land on nothing. The forms a citation takes:
//   - a repository path, `docs/protocols/agent.md section 12` (also `, sections 4 and 5`, `#anchor`);
//   - a bare page name, `agent.md section 12`, `speech-service.md 4.5, 9.5`: the page of that name
//     under docs/ (or at the root);
//   - `spec section 7` (`Spec section 7`, `spec 4.6`): the one docs/ page the same file
//     cites by name, which is "the spec" there; a file that says "spec section" citing no page, or
//     several, is ambiguous and fails;
//   - a markdown link between pages, `[text](agent.md#anchor) section 3`.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SCANNED = ['src', 'test', 'scripts', 'docs', 'README.md', 'BENCHMARKS.md'];
const TEXT_FILE = /\.(ts|js|mjs|cjs|md|json|ya?ml)$/;

/** `4`, `4.1`; several joined by commas, "and" or "to". */
const SECTION_LIST = String.raw`(\d+(?:\.\d+)*(?:(?:,\s*|\s+and\s+|\s+to\s+)\d+(?:\.\d+)*)*)`;
/** What may follow a page's name to cite sections: `section 4`, `, sections 4 and 5`, ` 4.5, 9.5`. */
const SECTIONS_AFTER = String.raw`(?:,?\s+(?:sections?\s+)?${SECTION_LIST}(?![\w.]*\w))?`;
/** A repository path to a page, as code comments write it, with an optional section. */
const REPO_CITATION = new RegExp(String.raw`\b(docs/[\w./-]*?\.md)(?:#([\w-]+))?${SECTIONS_AFTER}`, 'g');
/** A page by its bare name (not after a slash: that is a path, above). */
const BARE_CITATION = new RegExp(String.raw`(?<![\w./-])([\w-]+\.md)(?:#([\w-]+))?${SECTIONS_AFTER}`, 'g');
/** "spec section 7": a section of the page the file cites. */
const SPEC_CITATION = new RegExp(String.raw`\bspec(?:'s)?\s+(?:sections?\s+)?${SECTION_LIST}`, 'gi');
/** A markdown link between pages, with an optional section after it. */
const PAGE_LINK = new RegExp(
  String.raw`\]\(([^)\s#]+\.md)(?:#([\w-]+))?\)(?:\s+sections?\s+${SECTION_LIST})?`,
  'g',
);

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  if (!statSync(dir).isDirectory()) return [dir];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return TEXT_FILE.test(name) ? [path] : [];
  });
}

/** Section numbers of a page's numbered headings (`## 4. Settings` → 4, `### 4.1 Audio` → 4.1). */
function sectionsOf(page: string): Set<string> {
  const numbers = new Set<string>();
  for (const line of readFileSync(page, 'utf8').split('\n')) {
    const match = /^#{2,4} (\d+(?:\.\d+)*)\.? /.exec(line);
    if (match) numbers.add(match[1]!);
  }
  return numbers;
}

/** Anchors a rendered page gives its headings: lower case, punctuation dropped, spaces as hyphens. */
function anchorsOf(page: string): Set<string> {
  const anchors = new Set<string>();
  for (const line of readFileSync(page, 'utf8').split('\n')) {
    const match = /^#{1,6} (.+)$/.exec(line);
    if (!match) continue;
    anchors.add(
      match[1]!
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    );
  }
  return anchors;
}

interface Citation {
  from: string;
  page: string;
  anchor: string | undefined;
  sections: string[];
}

function parseSections(list: string | undefined): string[] {
  return list ? list.split(/,\s*|\s+and\s+|\s+to\s+/) : [];
}

/** Pages by bare name: every page under docs/, and the root's own. */
function pagesByName(): Map<string, string[]> {
  const byName = new Map<string, string[]>();
  for (const page of filesUnder(join(ROOT, 'docs')).filter((p) => p.endsWith('.md'))) {
    const name = page.slice(page.lastIndexOf('/') + 1);
    byName.set(name, [...(byName.get(name) ?? []), page]);
  }
  // A root page's name means the root page (README.md is the project's, not docs/protocols').
  for (const name of readdirSync(ROOT).filter((n) => n.endsWith('.md'))) byName.set(name, [join(ROOT, name)]);
  return byName;
}

/** Where a citation that names no page it can be resolved to points: nowhere, so it fails. */
const NOWHERE = join(ROOT, 'no such page');

function citations(): Citation[] {
  const byName = pagesByName();
  return (
    SCANNED.flatMap((dir) => filesUnder(join(ROOT, dir)))
      // This file states the forms; its examples are not citations.
      .filter((file) => file !== import.meta.filename)
      .flatMap((file) => citationsIn(file, readFileSync(file, 'utf8'), byName))
  );
}

/** The citations in one file's text. */
function citationsIn(file: string, text: string, byName: Map<string, string[]>): Citation[] {
  const found: Citation[] = [];
  const from = relative(ROOT, file);
  const cited = new Set<string>();
  for (const m of text.matchAll(REPO_CITATION)) {
    found.push({ from, page: join(ROOT, m[1]!), anchor: m[2], sections: parseSections(m[3]) });
    cited.add(join(ROOT, m[1]!));
  }
  if (!file.endsWith('.md')) {
    for (const m of text.matchAll(BARE_CITATION)) {
      const pages = byName.get(m[1]!) ?? [];
      const page = pages.length === 1 ? pages[0]! : NOWHERE;
      found.push({ from: `${from} (${m[1]})`, page, anchor: m[2], sections: parseSections(m[3]) });
      if (page !== NOWHERE && page.startsWith(join(ROOT, 'docs'))) cited.add(page);
    }
    for (const m of text.matchAll(SPEC_CITATION)) {
      const page = cited.size === 1 ? [...cited][0]! : NOWHERE;
      found.push({ from: `${from} (spec)`, page, anchor: undefined, sections: parseSections(m[1]) });
    }
  }
  if (file.endsWith('.md')) {
    for (const m of text.matchAll(PAGE_LINK)) {
      if (/^[a-z]+:/.test(m[1]!)) continue;
      found.push({
        from,
        page: resolve(dirname(file), m[1]!),
        anchor: m[2],
        sections: parseSections(m[3]),
      });
    }
  }
  return found;
}

/** Each cited section its page does not have. */
function missingSections(found: Citation[]): string[] {
  const missing: string[] = [];
  for (const c of found) {
    if (c.sections.length === 0 || !existsSync(c.page)) continue;
    const present = sectionsOf(c.page);
    for (const section of c.sections) {
      if (!present.has(section)) missing.push(`${c.from} → ${relative(ROOT, c.page)} section ${section}`);
    }
  }
  return missing;
}

describe('documentation citations', () => {
  const all = citations();

  it('finds the citations it checks', () => {
    expect(all.length).toBeGreaterThan(20);
  });

  it('cites only pages that exist', () => {
    const missing = all
      .filter((c) => !existsSync(c.page))
      .map((c) => `${c.from} → ${relative(ROOT, c.page)}`);
    expect(missing).toEqual([]);
  });

  it('cites only numbered sections that exist', () => {
    expect(missingSections(all)).toEqual([]);
  });

  it('recognises every form a citation takes, and fails on a section that does not exist', () => {
    const byName = pagesByName();
    const file = join(ROOT, 'src/example.ts');
    const forms = [
      '// docs/protocols/agent.md section 12; docs/protocols/agent.md, sections 4 and 98',
      '// agent.md section 97, twilio.md 3, 96',
      '// README.md and NOSUCH.md',
    ].join('\n');
    const found = citationsIn(file, forms, byName);
    expect(missingSections(found)).toEqual([
      'src/example.ts → docs/protocols/agent.md section 98',
      'src/example.ts (agent.md) → docs/protocols/agent.md section 97',
      'src/example.ts (twilio.md) → docs/protocols/twilio.md section 96',
    ]);
    expect(found.filter((c) => !existsSync(c.page)).map((c) => c.from)).toEqual([
      'src/example.ts (NOSUCH.md)',
    ]);
    // "The spec" is the one page the file names; naming none, or two, leaves it nowhere.
    const spec = '// docs/protocols/speech-service.md: spec section 9, Spec 95';
    expect(missingSections(citationsIn(file, spec, byName))).toEqual([
      'src/example.ts (spec) → docs/protocols/speech-service.md section 95',
    ]);
    const unnamed = citationsIn(file, '// spec section 9', byName);
    expect(unnamed.map((c) => existsSync(c.page))).toEqual([false]);
  });

  it('links only to anchors that exist', () => {
    const missing: string[] = [];
    for (const c of all) {
      if (c.anchor === undefined || !existsSync(c.page)) continue;
      if (!anchorsOf(c.page).has(c.anchor)) missing.push(`${c.from} → ${relative(ROOT, c.page)}#${c.anchor}`);
    }
    expect(missing).toEqual([]);
  });

  it('numbers the carrier pages alike, so a section number means the same on each', () => {
    const carriers = ['twilio', 'telnyx', 'plivo', 'vonage', 'exotel'];
    const headings = carriers.map((name) =>
      readFileSync(join(ROOT, 'docs/protocols', `${name}.md`), 'utf8')
        .split('\n')
        .filter((line) => /^## \d+\. /.test(line))
        .map((line) => line.replace(/^## (\d+)\. .*/, '$1')),
    );
    for (const numbers of headings) expect(numbers).toEqual(headings[0]);
    expect(headings[0]).toHaveLength(10);
  });
});
