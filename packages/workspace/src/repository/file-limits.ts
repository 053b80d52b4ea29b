/** Files larger than this are left out of checkpoints unless `maxFileBytes` says otherwise (50 MiB). */
export const DEFAULT_MAX_FILE_BYTES = 50 * 1024 * 1024;
