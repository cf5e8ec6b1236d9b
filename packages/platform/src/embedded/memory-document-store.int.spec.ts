// Relative import: @castie/testing depends on @castie/platform, so the reverse would be a cycle.
import { describeDocumentStore } from '../../../testing/src/conformance/document-store.ts';
import { createMemoryDocumentStore } from './memory-document-store.ts';

describeDocumentStore('in-memory (mingo)', () => createMemoryDocumentStore());
