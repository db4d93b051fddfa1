// `callbridge <command>`: the one executable (package.json `bin`).
const USAGE = `usage: callbridge <command> [options]

commands:
  serve     run the server (what npm start runs)
  sim       run the local voice agent: sim [--port 8090] [--host 127.0.0.1] [--scenario FILE]
  call      place a simulated call: call [--server URL] [--carrier twilio] [--wav FILE] [--out FILE]
            [--from E164] [--to E164] [--hold-ms N] [--no-wait]
  bench     run the load benchmark (see BENCHMARKS.md)
  doctor    check configuration, secrets and reachability of the configured hosts
  campaign  run and follow outbound campaigns: campaign run FILE.csv | status ID [--watch] |
            pause ID | resume ID | cancel ID | export ID (campaign --help for the options)
  keys      API keys for the admin API and the console: keys create --name NAME --role ROLE |
            list | delete ID (written to the configured store)
`;

const SERVE_USAGE = `usage: callbridge serve

Runs the server (what npm start runs). It takes no options: it is configured by the environment
(PORT, HOST, DATA_DIR, AGENT_URL, carriers' credentials…), every variable in docs/configuration.md.
Check a configuration with \`callbridge doctor\`.
`;

const [command, ...args] = process.argv.slice(2);
const wantsHelp = args.includes('--help') || args.includes('-h');

switch (command) {
  case 'serve':
    if (wantsHelp) process.stdout.write(SERVE_USAGE);
    else if (args.length > 0) {
      process.stderr.write(`callbridge serve: unknown option "${args[0]}"\n${SERVE_USAGE}`);
      process.exitCode = 2;
    } else await import('./main.js');
    break;
  case 'sim': {
    const { simCommand } = await import('./sim/agent/command.js');
    await simCommand(args);
    break;
  }
  case 'call': {
    const { callCommand } = await import('./sim/carrier/command.js');
    process.exitCode = await callCommand(args);
    break;
  }
  case 'bench': {
    if (args[0] === 'campaign') {
      const { campaignBenchCommand } = await import('./bench/campaign.js');
      process.exitCode = await campaignBenchCommand(args.slice(1));
      break;
    }
    if (args[0] === 'upload') {
      const { uploadBenchCommand } = await import('./bench/upload.js');
      process.exitCode = await uploadBenchCommand(args.slice(1));
      break;
    }
    if (args[0] === 'console') {
      const { consoleBenchCommand } = await import('./bench/console.js');
      process.exitCode = await consoleBenchCommand(args.slice(1));
      break;
    }
    if (args[0] === 'gateway') {
      const { gatewayBenchCommand } = await import('./bench/gateway.js');
      process.exitCode = await gatewayBenchCommand(args.slice(1));
      break;
    }
    const { benchCommand } = await import('./bench/command.js');
    process.exitCode = await benchCommand(args);
    break;
  }
  case 'doctor': {
    const { doctorCommand } = await import('./doctor/command.js');
    process.exitCode = await doctorCommand(args);
    break;
  }
  case 'campaign': {
    const { campaignCommand } = await import('./campaign-cli/command.js');
    process.exitCode = await campaignCommand(args);
    break;
  }
  case 'keys': {
    const { keysCommand } = await import('./admin/keys-command.js');
    process.exitCode = await keysCommand(args, {
      env: process.env,
      out: (text) => process.stdout.write(text),
      err: (text) => process.stderr.write(text),
    });
    break;
  }
  case 'help':
  case '--help':
  case '-h':
  case undefined:
    process.stdout.write(USAGE);
    break;
  default:
    process.stderr.write(`callbridge: unknown command "${command}"\n${USAGE}`);
    process.exitCode = 2;
}
