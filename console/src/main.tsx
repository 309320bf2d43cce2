// The console: sign-in, the frame (navigation, who is signed in, sign-out) and the screens by
// path. Each screen lives in its own file under screens/ and uses only the documented API
// through the signed-in key's client (ui.tsx's useConsole).
import { render } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { clientOf } from './api.js';
import { interceptLinks, useLocation, href, type Location } from './router.js';
import { AuditScreen } from './screens/audit.js';
import { BulkScreen } from './screens/bulk.js';
import { InsightsScreen } from './screens/insights.js';
import { KeysScreen } from './screens/keys.js';
import { RunScreen } from './screens/run.js';
import { RunsScreen } from './screens/runs.js';
import { ScheduleScreen } from './screens/schedule.js';
import { SchedulesScreen } from './screens/schedules.js';
import { SignIn } from './screens/sign-in.js';
import { TasksScreen } from './screens/tasks.js';
import { TemplateScreen } from './screens/template.js';
import { TemplatesScreen } from './screens/templates.js';
import { WebhooksScreen } from './screens/webhooks.js';
import { clearSession, holds, loadSession, type Session } from './session.js';
import type { Scope } from './vocabulary.js';
import { ConfirmHost, Context } from './ui.js';

interface NavItem {
  path: string;
  label: string;
  /** The scope the screen needs to show anything. */
  scope: Scope;
  /** Whether a path belongs to the item (for aria-current). */
  owns(path: string): boolean;
}

const NAV: NavItem[] = [
  { path: '/', label: 'Runs', scope: 'runs:read', owns: (p) => p === '/' || p.startsWith('/runs') },
  { path: '/tasks', label: 'Tasks', scope: 'runs:read', owns: (p) => p.startsWith('/tasks') },
  { path: '/bulk', label: 'Bulk actions', scope: 'runs:read', owns: (p) => p.startsWith('/bulk') },
  {
    path: '/insights',
    label: 'Insights',
    scope: 'runs:read',
    owns: (p) => p.startsWith('/insights'),
  },
  {
    path: '/schedules',
    label: 'Schedules',
    scope: 'schedules:read',
    owns: (p) => p.startsWith('/schedules'),
  },
  {
    path: '/templates',
    label: 'Templates',
    scope: 'templates:read',
    owns: (p) => p.startsWith('/templates'),
  },
  {
    path: '/webhooks',
    label: 'Webhooks',
    scope: 'webhooks:read',
    owns: (p) => p.startsWith('/webhooks'),
  },
  { path: '/keys', label: 'API keys', scope: 'keys:manage', owns: (p) => p.startsWith('/keys') },
  { path: '/audit', label: 'Audit log', scope: 'audit:read', owns: (p) => p.startsWith('/audit') },
];

function screenFor(location: Location) {
  const { path } = location;
  const [, first, second] = path.split('/');
  const id = second ? decodeURIComponent(second) : undefined;
  switch (first) {
    case '':
      return <RunsScreen location={location} />;
    case 'runs':
      return id ? <RunScreen id={id} /> : <RunsScreen location={location} />;
    case 'tasks':
      return <TasksScreen location={location} />;
    case 'bulk':
      return <BulkScreen location={location} />;
    case 'insights':
      return <InsightsScreen location={location} />;
    case 'schedules':
      return id ? (
        <ScheduleScreen id={id} location={location} />
      ) : (
        <SchedulesScreen location={location} />
      );
    case 'templates':
      return id ? <TemplateScreen id={id} location={location} /> : <TemplatesScreen />;
    case 'webhooks':
      return <WebhooksScreen location={location} />;
    case 'keys':
      return <KeysScreen />;
    case 'audit':
      return <AuditScreen location={location} />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>
            There is no console page at this address. <a href={href('/')}>Go to the runs</a>.
          </p>
        </section>
      );
  }
}

function Frame({ session, onSignOut }: { session: Session; onSignOut(): void }) {
  const location = useLocation();
  const api = useMemo(() => clientOf(session.key), [session.key]);
  const [menuOpen, setMenuOpen] = useState(false);
  const context = useMemo(() => ({ session, api, signOut: onSignOut }), [session, api, onSignOut]);
  return (
    <Context.Provider value={context}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href('/')}>
          Workflow runs
        </a>
        <button
          type="button"
          class="menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <nav id="nav" class={menuOpen ? 'open' : ''} aria-label="Console">
          <ul>
            {NAV.map((item) => (
              <li key={item.path}>
                <a
                  href={href(item.path)}
                  aria-current={item.owns(location.path) ? 'page' : undefined}
                  class={holds(session, item.scope) ? '' : 'denied'}
                  title={holds(session, item.scope) ? undefined : `needs ${item.scope}`}
                  onClick={() => setMenuOpen(false)}
                >
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span class="key-name" title={`key ${session.info.prefix}…`}>
            {session.info.name ?? session.info.prefix}
          </span>
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {screenFor(location)}
      </main>
      <ConfirmHost />
    </Context.Provider>
  );
}

function App() {
  const [session, setSession] = useState<Session | null>(loadSession);
  const signOut = useMemo(
    () => () => {
      clearSession();
      setSession(null);
    },
    [],
  );
  if (!session) return <SignIn onSignedIn={setSession} />;
  return <Frame session={session} onSignOut={signOut} />;
}

const root = document.getElementById('app')!;
interceptLinks(root);
render(<App />, root);
