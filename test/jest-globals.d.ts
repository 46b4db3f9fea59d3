// Jest's globals as @jest/globals (part of jest) types them, instead of adding @types/jest.
declare const {
	expect,
	test,
	describe,
	beforeAll,
	beforeEach,
	afterEach,
	afterAll,
	jest,
}: typeof import('@jest/globals');

// @n8n/scan-community-package ships no types (test/verification/scan.mjs).
declare module '@n8n/scan-community-package/scanner/scanner.mjs' {
	type Scan = { passed: boolean; message?: string; details?: string };
	export const SOURCE_FILE_PATTERNS: string[];
	export function analyzePackage(packageDir: string, patterns?: string[]): Promise<Scan>;
}
