// Preloaded by gen-cli-docs.mjs (`node --import ./help-dump.mjs dist/main.js`): instead of running
// a command, the program prints the full --help text of itself and every subcommand as JSON.
import { Command } from 'commander';

Command.prototype.parseAsync = async function dumpHelp() {
  const pages = [];
  const visit = (command, path) => {
    let text = '';
    command.configureOutput({
      writeOut: (chunk) => (text += chunk),
      writeErr: (chunk) => (text += chunk),
    });
    command.outputHelp();
    pages.push({ path, help: text });
    for (const child of command.commands) visit(child, [...path, child.name()]);
  };
  visit(this, [this.name()]);
  process.stdout.write(JSON.stringify(pages));
  return this;
};
