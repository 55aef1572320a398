import { withLaterStyles } from '../components/with-later-styles';
import { deferredComponent } from '../lib/deferred-component';
import { ProjectSwitcherPlaceholder } from './ProjectSwitcherPlaceholder';

const switcher = deferredComponent<object>(async () => (await withLaterStyles(() => import('./ProjectSwitcher'))()).ProjectSwitcher);

/** The header's project switcher, or its look-alike for the moment its code is loading. */
export function ProjectSwitcherSlot() {
  const ProjectSwitcher = switcher.useComponent();
  return ProjectSwitcher ? <ProjectSwitcher /> : <ProjectSwitcherPlaceholder />;
}
