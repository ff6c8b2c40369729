/** The largest number an integer column of the store holds (PostgreSQL's `integer`; MongoDB keeps it alike). */
export const MAX_STORED_INTEGER = 2_147_483_647;
