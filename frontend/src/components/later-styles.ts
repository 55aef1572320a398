import './mantine-later.css';

// Imported (dynamically) only through withLaterStyles below: its stylesheet is this chunk's CSS.
export {};
