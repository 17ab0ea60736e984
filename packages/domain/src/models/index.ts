/** The model catalog, providers, the router, the one metered model call. */
export * as Catalog from "./Catalog.js"
export * as HeldCalls from "./HeldCalls.js"
export * as MeteredCall from "./MeteredCall.js"
export * as Model from "./Model.js"
export * as ModelProviders from "./ModelProviders.js"
export * as ProviderSupport from "./ProviderSupport.js"
export * as Router from "./Router.js"
