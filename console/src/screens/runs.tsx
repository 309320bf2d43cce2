// (to be built)
import type { Location } from '../router.js';
import { ScreenHeader } from '../ui.js';

export function RunsScreen({ location }: { location: Location }) {
  return <ScreenHeader title="RunsScreen" />;
}
