export const responseExamples: Record<string, unknown> = {};
