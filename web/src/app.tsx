// The console: sign-in until there is a session, then the screens behind the navigation.
import { LocationProvider, Route, Router } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, del, get, setCsrf, whenSignedOut } from './api.js';
import { Layout } from './layout.js';
import { AuditScreen } from './screens/audit.js';
import { CallPageScreen } from './screens/call-page.js';
import { CallsScreen } from './screens/calls.js';
import { CampaignPageScreen } from './screens/campaign-page.js';
import { CampaignsScreen } from './screens/campaigns.js';
import { DncScreen } from './screens/dnc.js';
import { KeysScreen } from './screens/keys.js';
import { LiveCallsScreen } from './screens/live-calls.js';
import { NewCampaignScreen } from './screens/new-campaign.js';
import { NotFound } from './screens/not-found.js';
import { SignIn } from './sign-in.js';
import { SessionContext } from './session.js';
import type { Session } from './types.js';

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);

  const signedIn = (next: Session | null) => {
    setCsrf(next?.csrf ?? null);
    setSession(next);
  };

  useEffect(() => {
    whenSignedOut(() => signedIn(null));
    get('/v1/session').then(signedIn, (err: unknown) => {
      if (!(err instanceof ApiError) || err.status !== 401) console.warn('session check failed', err);
      signedIn(null);
    });
  }, []);

  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null) return <SignIn onSignedIn={signedIn} />;

  const signOut = async () => {
    try {
      await del('/v1/session');
    } finally {
      signedIn(null);
    }
  };

  return (
    <SessionContext.Provider value={session}>
      <LocationProvider scope="/console">
        <Layout session={session} onSignOut={signOut}>
          <Router>
            <Route path="/console" component={LiveCallsScreen} />
            <Route path="/console/" component={LiveCallsScreen} />
            <Route path="/console/calls" component={CallsScreen} />
            <Route path="/console/calls/:callSid" component={CallPageScreen} />
            <Route path="/console/campaigns" component={CampaignsScreen} />
            <Route path="/console/campaigns/new" component={NewCampaignScreen} />
            <Route path="/console/campaigns/:id" component={CampaignPageScreen} />
            <Route path="/console/dnc" component={DncScreen} />
            <Route path="/console/keys" component={session.role === 'admin' ? KeysScreen : NotFound} />
            <Route path="/console/audit" component={session.role === 'admin' ? AuditScreen : NotFound} />
            <Route default component={NotFound} />
          </Router>
        </Layout>
      </LocationProvider>
    </SessionContext.Provider>
  );
}
