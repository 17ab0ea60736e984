/** What a request runs with: personal preferences, an org's enforced policies, and the precedence that decides each setting. */
export * as Policies from "./Policies.js"
export * as Policy from "./Policy.js"
export * as PreferenceRepository from "./PreferenceRepository.js"
export * as Preferences from "./Preferences.js"
