import type { z } from 'zod';
import type { AdminCore } from './admin-core.js';
import type { OpOutput } from './contract.js';
import { ApiFailure, supported } from './http-util.js';
import type { profileOps } from './schemas/profiles.js';

type ProfileOps = typeof profileOps;
type ProfileImpls = {
  [K in keyof ProfileOps]: (input: z.infer<ProfileOps[K]['input']>) => OpOutput<K> | Promise<OpOutput<K>>;
};

/** The profiles per network (#64): what the Settings card asks. */
export function profileOperations(core: AdminCore): ProfileImpls {
  const profiles = () =>
    supported(core.profiles, 'profiles per network need saved settings (a core started with its config layers)');
  return {
    getProfiles: () => profiles().state(),
    saveProfile: ({ name, choices }) => profiles().save(name, choices),
    removeProfile: async ({ network }) => {
      const state = await profiles().remove(network);
      if (!state) throw new ApiFailure(404, 'GH_ERR_API_NOT_FOUND', `no profile for network ${network}`);
      return state;
    },
  };
}
