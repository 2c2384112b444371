import path from 'node:path';
import ts from 'typescript';

/**
 * Type-checks service-inputs.typecheck.ts and error-codes.typecheck.ts: every `@ts-expect-error` there must meet an error (an
 * unused one is itself an error), and nothing else may fail.
 */
it('tsc refuses misspelled fields passed to service methods and error codes outside the table, and accepts the right ones', () => {
  const configFile = ts.readConfigFile(path.join(__dirname, '../../tsconfig.json'), (f) => ts.sys.readFile(f));
  const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, path.join(__dirname, '../..'));
  const files = [path.join(__dirname, 'service-inputs.typecheck.ts'), path.join(__dirname, 'error-codes.typecheck.ts')];
  const program = ts.createProgram(files, { ...options, noEmit: true });
  // The two files' own diagnostics (and the program's): checking them reads the types they use from src, not every
  // function body there, which `tsc --noEmit -p .` (npm run lint) checks in whole. A whole-program check took ~40 s.
  const checked = files.map((file) => program.getSourceFile(file)!);
  const diagnostics = [
    ...program.getConfigFileParsingDiagnostics(),
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...checked.flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]),
  ].map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  expect(diagnostics).toEqual([]);
});
