import { PageHeading } from '../components/PageHeading';
import { Link } from '../router';

export function NotFoundPage() {
  return (
    <>
      <PageHeading title="Page not found" />
      <p>
        There is no such page in the dashboard. Go to <Link to="keys">your API keys</Link>.
      </p>
    </>
  );
}
