// config/regions.json: the agent and speech hosts of each region (docs/protocols/speech-service.md section 1).
// Regional deployments run the agent on the regional API host; management calls always go to the
// global API host because /v1/projects is not served regionally.
import { join } from 'node:path';
import { checkShape, displayPath, fileError, readJson } from './json-file.js';
import { RegionsFile } from './schema.js';
import { REGIONS, type Region, type RegionHosts } from './types.js';
import { checkUrl, HOST_URL } from './urls.js';

const AGENT_URL_RULE = HOST_URL(['ws', 'wss']);
const SPEECH_API_URL_RULE = HOST_URL(['http', 'https']);

export function loadRegions(configDir: string, cwd: string): Record<Region, RegionHosts> {
  const file = join(configDir, 'regions.json');
  const shown = displayPath(file, cwd);
  const parsed = checkShape(RegionsFile, readJson(file, shown), shown);

  const urlOf = (region: Region, field: 'agentUrl' | 'speechApiUrl'): string => {
    const rule = field === 'agentUrl' ? AGENT_URL_RULE : SPEECH_API_URL_RULE;
    const raw = parsed[region][field];
    const checked = checkUrl(raw, rule);
    if (!checked.ok)
      throw fileError(shown, `/${region}/${field}`, `${checked.problem}, got ${JSON.stringify(raw)}`);
    return checked.url;
  };

  const managementApiUrl = urlOf('global', 'speechApiUrl');
  const hosts = {} as Record<Region, RegionHosts>;
  for (const region of REGIONS) {
    hosts[region] = {
      agentUrl: urlOf(region, 'agentUrl'),
      speechApiUrl: urlOf(region, 'speechApiUrl'),
      managementApiUrl,
    };
  }
  return hosts;
}
