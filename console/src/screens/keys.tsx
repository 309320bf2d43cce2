// (to be built)
import { ScreenHeader } from '../ui.js';

export function KeysScreen() {
  return <ScreenHeader title="KeysScreen" />;
}
