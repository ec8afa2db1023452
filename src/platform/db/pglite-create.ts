// The worker thread that creates a new embedded data directory (platform/db/index.ts,
// createInWorker): initdb and every migration, then it closes the database and exits, and the
// WebAssembly heap they grew goes with it.
import { workerData } from 'node:worker_threads';
import { migrate, openDatabase } from './index.js';

const { dataDir, sharedBuffers } = workerData as { dataDir: string; sharedBuffers?: string };
const database = await openDatabase({ dataDir, createHere: true, ...(sharedBuffers ? { sharedBuffers } : {}) });
try {
  await migrate(database.db);
} finally {
  await database.close();
}
