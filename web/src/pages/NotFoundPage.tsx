import { PageHeading } from '../components/PageHeading';
import { Link } from '../router';

/** No such page; or, `forbidden`, a page the role in this organization does not open. */
export function NotFoundPage({ forbidden = false }: { forbidden?: boolean }) {
  if (forbidden)
    return (
      <>
        <PageHeading title="Not available with your role" />
        <p>
          Your role in this organization does not give access to this page; an admin or the owner can change it. See{' '}
          <Link to="team">your team</Link>.
        </p>
      </>
    );
  return (
    <>
      <PageHeading title="Page not found" />
      <p>
        There is no such page in the dashboard. Go to <Link to="keys">your API keys</Link>.
      </p>
    </>
  );
}
