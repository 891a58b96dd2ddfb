'use client';
/** The frame of every page: skip link, navigation, who is signed in; the sign-in form when nobody is. */
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import type { ReactNode } from 'react';
import { useQuery } from 'urql';
import { sentence } from '../lib/errors';
import { MeQuery } from '../lib/queries';
import { useSession } from '../lib/session';
import { SignIn } from './SignIn';

const NAV: { href: string; label: string; adminOnly?: boolean }[] = [
  { href: '/', label: 'Home' },
  { href: '/approvals', label: 'Approvals' },
  { href: '/instances', label: 'Instances' },
  { href: '/incidents', label: 'Incidents' },
  { href: '/workers', label: 'Workers' },
  { href: '/definitions', label: 'Definitions' },
  { href: '/principals', label: 'Principals', adminOnly: true },
];

/** The main navigation; admin pages are listed only for admins (the API refuses the others anyway). */
function Nav() {
  const pathname = usePathname();
  const [{ data }] = useQuery({ query: MeQuery });
  const admin = data?.me.kind === 'ADMIN';
  return (
    <nav aria-label="Main">
      <ul>
        {NAV.filter((n) => !n.adminOnly || admin).map((n) => (
          <li key={n.href}>
            <Link href={n.href} aria-current={(n.href === '/' ? pathname === '/' : pathname?.startsWith(n.href)) ? 'page' : undefined}>
              {n.label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function Who() {
  const { signOut } = useSession();
  const [{ data, error }] = useQuery({ query: MeQuery });
  return (
    <div className="who">
      {data ? (
        <span data-testid="me">
          <strong>{data.me.name}</strong>{' '}
          <span className="muted">
            {data.me.kind.toLowerCase()}
            {data.me.groups.length ? ` · ${data.me.groups.join(', ')}` : ''}
          </span>
        </span>
      ) : error ? (
        <span className="error-text">{sentence(error)}</span>
      ) : null}
      <button type="button" className="link-button" onClick={signOut}>
        Sign out
      </button>
    </div>
  );
}

export function Shell({ children }: { children: ReactNode }) {
  const { signedIn, ready } = useSession();
  return (
    <>
      <a href="#main" className="skip">
        Skip to content
      </a>
      <header className="top">
        <Link href="/approvals" className="brand">
          Abada
        </Link>
        {signedIn ? <Nav /> : null}
        {signedIn ? <Who /> : null}
      </header>
      <main id="main">{!ready ? <p className="muted">Loading…</p> : signedIn ? children : <SignIn />}</main>
    </>
  );
}
