// (to be built)
import type { Location } from '../router.js';
import { ScreenHeader } from '../ui.js';

export function TemplateScreen({ id, location }: { id: string; location: Location }) {
  return <ScreenHeader title="TemplateScreen" />;
}
