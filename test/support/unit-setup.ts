// Unit specs touch no network nor database: 15 s is ample even on a loaded 2-core machine.
jest.setTimeout(15_000);
