/** The multi-model council: participants, protocol, run and report (multi and auto mode). */
export * as ConsensusReport from "./ConsensusReport.js"
export * as Council from "./Council.js"
export * as Panel from "./Panel.js"
export * as Protocol from "./Protocol.js"
export * as AutoMode from "./AutoMode.js"
