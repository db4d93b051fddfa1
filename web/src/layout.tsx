// The frame of every screen: a skip link, the navigation, who is signed in, and the screen.
import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import type { Session } from './types.js';

interface NavItem {
  href: string;
  label: string;
  /** Other paths that belong to this item (a call's page belongs to Calls). */
  prefix?: string;
}

const NAV: NavItem[] = [
  { href: '/console', label: 'Live calls' },
  { href: '/console/calls', label: 'Calls', prefix: '/console/calls/' },
  { href: '/console/campaigns', label: 'Campaigns', prefix: '/console/campaigns/' },
  { href: '/console/dnc', label: 'Do not call' },
];
const ADMIN_NAV: NavItem[] = [
  { href: '/console/keys', label: 'Keys' },
  { href: '/console/audit', label: 'Audit' },
];

function isCurrent(item: NavItem, path: string): boolean {
  const trimmed = path.replace(/\/$/, '') || '/';
  return trimmed === item.href || (item.prefix !== undefined && trimmed.startsWith(item.prefix));
}

export function Layout(props: { session: Session; onSignOut: () => void; children: ComponentChildren }) {
  const { path } = useLocation();
  const items = props.session.role === 'admin' ? [...NAV, ...ADMIN_NAV] : NAV;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">callbridge</span>
        <nav aria-label="Main">
          <ul>
            {items.map((item) => (
              <li key={item.href}>
                <a href={item.href} aria-current={isCurrent(item, path) ? 'page' : undefined}>
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="account">
          <span>
            {props.session.name} <span class="role">({props.session.role})</span>
          </span>
          <button type="button" class="quiet" onClick={props.onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </>
  );
}
