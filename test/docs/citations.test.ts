// Every citation of this repository's documentation resolves: a comment or a page that names a page
// under docs/ (and a numbered section of it) points at a file and a heading that exist, so readers
// following a citation never land on nothing.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SCANNED = ['src', 'test', 'scripts', 'docs', 'README.md', 'BENCHMARKS.md'];
const TEXT_FILE = /\.(ts|js|mjs|cjs|md|json|ya?ml)$/;

/** `4`, `4.1`; several joined by commas, "and" or "to". */
const SECTION_LIST = String.raw`(\d+(?:\.\d+)*(?:(?:,\s*|\s+and\s+|\s+to\s+)\d+(?:\.\d+)*)*)`;
/** A repository path to a page, as code comments write it, with an optional section. */
const REPO_CITATION = new RegExp(
  String.raw`\b(docs/[\w./-]*?\.md)(?:#([\w-]+))?(?:\s+sections?\s+${SECTION_LIST})?`,
  'g',
);
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

function citations(): Citation[] {
  const found: Citation[] = [];
  for (const file of SCANNED.flatMap((dir) => filesUnder(join(ROOT, dir)))) {
    const text = readFileSync(file, 'utf8');
    const from = relative(ROOT, file);
    for (const m of text.matchAll(REPO_CITATION)) {
      found.push({ from, page: join(ROOT, m[1]!), anchor: m[2], sections: parseSections(m[3]) });
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
  }
  return found;
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
    const missing: string[] = [];
    for (const c of all) {
      if (c.sections.length === 0 || !existsSync(c.page)) continue;
      const present = sectionsOf(c.page);
      for (const section of c.sections) {
        if (!present.has(section)) missing.push(`${c.from} → ${relative(ROOT, c.page)} section ${section}`);
      }
    }
    expect(missing).toEqual([]);
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
