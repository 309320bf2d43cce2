// (to be built)
import type { Location } from '../router.js';
import { ScreenHeader } from '../ui.js';

export function WebhooksScreen({ location }: { location: Location }) {
  return <ScreenHeader title="WebhooksScreen" />;
}
