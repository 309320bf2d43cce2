// (to be built)
import { ScreenHeader } from '../ui.js';

export function TemplatesScreen() {
  return <ScreenHeader title="TemplatesScreen" />;
}
