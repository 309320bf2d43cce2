// (to be built)
import { ScreenHeader } from '../ui.js';

export function RunScreen({ id }: { id: string }) {
  return <ScreenHeader title="RunScreen" />;
}
