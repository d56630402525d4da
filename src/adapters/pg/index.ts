/**
 * @module adapters/pg
 * The PostgreSQL server storage backend (through `pg`), for several processes sharing one log.
 */
export { PgBackend, type PgBackendOptions } from './backend.js';
