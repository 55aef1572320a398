// Stands in for react-remove-scroll where Mantine's AppShell header, footer and aside import it
// only for RemoveScroll.classNames (see lighterVendorImports in vite.config.ts): the component
// itself (with use-sidecar and react-style-singleton) is for modals and drawers, which load later.
// The names are the library's own constants, so a modal's scroll lock still finds the header.
import { fullWidthClassName, zeroRightClassName } from 'react-remove-scroll-bar/constants';

export const RemoveScroll = { classNames: { fullWidth: fullWidthClassName, zeroRight: zeroRightClassName } };
