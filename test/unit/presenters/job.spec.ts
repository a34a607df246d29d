/** API v4's Job and pipeline entities (presenters/job.ts, presenters/pipeline.ts). */
import type { BuildDoc } from "../../../models/build";
import type { PipelineDoc } from "../../../models/pipeline";
import { presentJob } from "../../../presenters/job";
import { presentPipeline, presentPipelineBasic } from "../../../presenters/pipeline";

const place = { gitlabUrl: "https://gitlab.example.com", projectPath: "ada/demo" };
const build: BuildDoc = {
	id: 9,
	project_id: 3,
	seq: 1,
	project_seq: "3|0000000001",
	project_status: "3|running",
	project_sha: "3|abc",
	name: "rspec",
	stage: "test",
	ref: "master",
	tag: false,
	status: "running",
	coverage: null,
	created_at: "2016-01-11T10:13:33.000Z",
	started_at: "2016-01-11T10:13:43.000Z",
	finished_at: null,
	commit: {
		id: "abc",
		short_id: "abc",
		title: "t",
		message: "m",
		author_name: "Ada",
		author_email: "ada@example.com",
		created_at: "2016-01-11T10:00:00+01:00",
	},
	user_id: null,
	artifacts: null,
	erased_at: null,
	erased_by: null,
	pipeline_id: 4,
};
const pipeline: PipelineDoc = {
	id: 4,
	iid: 2,
	project_id: 3,
	sha: "abc",
	ref: "master",
	tag: false,
	user_id: null,
	status: "success",
	created_at: "2016-01-11T10:13:33.000Z",
	updated_at: "2016-01-11T10:15:00.000Z",
	started_at: "2016-01-11T10:13:43.000Z",
	finished_at: "2016-01-11T10:15:00.000Z",
	project_sha_ref: "3|abc|master",
	project_ref: "3|master",
};

it("shows a running job's times up to now, and no failure reason", () => {
	const job = presentJob(build, null, pipeline, place, Date.parse("2016-01-11T10:14:43.500Z"));
	expect(job).toMatchObject({ duration: 60.5, queued_duration: 10, erased_at: null, web_url: "https://gitlab.example.com/ada/demo/-/jobs/9", artifacts: [] });
	expect(job).not.toHaveProperty("failure_reason");
	expect(job).not.toHaveProperty("artifacts_file");
	expect(job.commit).toMatchObject({ created_at: "2016-01-11T10:00:00+01:00", authored_date: "2016-01-11T10:00:00+01:00", committer_name: "Ada" });
	expect(job.pipeline).toEqual(presentPipelineBasic(pipeline, place));
});

it("shows a failed job's reason and its artifacts as v4 lists them", () => {
	const failed = presentJob(
		{ ...build, status: "failed", finished_at: "2016-01-11T10:14:00.000Z", artifacts: { filename: "a.zip", size: 10, file: "x" } },
		null,
		null,
		place,
	);
	expect(failed).toMatchObject({
		failure_reason: "unknown_failure",
		duration: 17,
		pipeline: null,
		artifacts_file: { filename: "a.zip", size: 10 },
		artifacts: [{ file_type: "archive", size: 10, filename: "a.zip", file_format: "zip" }],
	});
});

it("shows a pipeline with its times and its detailed status", () => {
	expect(presentPipeline(pipeline, null, place)).toMatchObject({
		id: 4,
		iid: 2,
		status: "success",
		web_url: "https://gitlab.example.com/ada/demo/-/pipelines/4",
		duration: 77,
		queued_duration: 10,
		user: null,
		detailed_status: { icon: "status_success", text: "passed", group: "success", details_path: "/ada/demo/-/pipelines/4" },
	});
});
