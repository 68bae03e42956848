/** Tables of the documents schema (feature tables are added by their migrations). */
export type DocumentsDatabase = {};
