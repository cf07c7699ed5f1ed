/** Regions and domains are listed whole, by name (administrators create them): at most this many of each. */
export const CATALOGUE_MAX = 1000;
