// (to be built)
import type { Location } from '../router.js';
import { ScreenHeader } from '../ui.js';

export function BulkScreen({ location }: { location: Location }) {
  return <ScreenHeader title="BulkScreen" />;
}
