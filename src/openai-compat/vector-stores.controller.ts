import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Query,
  Res,
  StreamableFile,
  UseInterceptors,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiQuery,
} from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../common/auth.decorators.js';
import {
  AttachStorageFullError,
  ConflictError,
  FilesStorageFullError,
  NotFoundError,
  ValidationFailedError,
} from '../common/errors.js';
import { abortedWhenClientGoes } from '../common/event-stream.js';
import type { Principal } from '../common/principal.js';
import type { HttpReply } from '../common/request.js';
import { isUuid } from '../common/validation.js';
import { BodyValidationPipe } from '../common/validation.js';
import { duplicateName, DEFAULT_NOT_DELETABLE } from '../collections/collections.service.js';
import type { UploadedFile as Upload } from '../documents/extraction/extract-upload.js';
import { DocumentUploadInterceptor, UploadedDocument } from '../documents/upload.interceptor.js';
import {
  AttachFileDto,
  CreateVectorStoreDto,
  FileUploadFieldsDto,
  FileUploadForm,
  SearchVectorStoreDto,
  searchQueryText,
  UpdateVectorStoreDto,
} from './dto/vector-store.dto.js';
import {
  DeletedResponse,
  FileList,
  FileResponse,
  VectorStoreFileList,
  VectorStoreFileResponse,
  VectorStoreList,
  VectorStoreResponse,
  VectorStoreSearchPage,
} from './dto/vector-store.response.js';
import { metadataFilterOf } from './openai-filters.js';
import { ApiOpenAiErrors } from './openai-errors.js';
import {
  presentFile,
  presentList,
  presentSearch,
  presentVectorStore,
  presentVectorStoreFile,
} from './vector-store.presenter.js';
import type { ListWindow } from './vector-stores.repository.js';
import { VectorStoresService } from './vector-stores.service.js';
import { ApiController } from '../openapi/api-controller.js';

/** A file name as a Content-Disposition `filename*` value (RFC 5987: `'`, `(`, `)`, `*` escaped too). */
const rfc5987 = (name: string) =>
  encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** How soon a client polling a file still `in_progress` should ask again. */
const POLL_AFTER_MS = 500;

/** OpenAI's statuses of a vector-store file, as `GET …/files?filter=` takes them. */
const FILE_STATUSES = ['in_progress', 'completed', 'failed', 'cancelled'];

/** OpenAI's `?limit=&order=&after=&before=`, checked (a 400 naming the parameter). */
function windowOf(query: Record<string, unknown>): ListWindow {
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw ValidationFailedError.field('limit', 'Must be a whole number from 1 to 100.');
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw ValidationFailedError.field('order', 'Must be "asc" or "desc".');
  for (const name of ['after', 'before'] as const) {
    const value = query[name];
    if (value !== undefined && (typeof value !== 'string' || !isUuid(value)))
      throw ValidationFailedError.field(name, 'Must be the id of an item of this list.');
  }
  return { limit, order, after: query.after as string | undefined, before: query.before as string | undefined };
}

const LIST_QUERY = () => [
  ApiQuery({
    name: 'limit',
    required: false,
    schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 100, default: 20 },
  }),
  ApiQuery({ name: 'order', required: false, schema: { type: 'string', enum: ['asc', 'desc'], default: 'desc' } }),
  ApiQuery({ name: 'after', required: false, schema: { type: 'string', format: 'uuid' } }),
  ApiQuery({ name: 'before', required: false, schema: { type: 'string', format: 'uuid' } }),
];
const listQuery = () => (target: object, key: string | symbol, descriptor: PropertyDescriptor) => {
  for (const decorator of LIST_QUERY()) decorator(target, key, descriptor);
};
const STORE_ID = () =>
  ApiParam({
    name: 'id',
    schema: { type: 'string', maxLength: 100 },
    description: "The vector store's (collection's) id.",
  });
const FILE_ID = () =>
  ApiParam({ name: 'fileId', schema: { type: 'string', maxLength: 100 }, description: 'The file id.' });
const NO_STORE = {
  404: {
    description: "No such vector store, another organization's, or one this API key may not reach.",
    bodies: { unknown: NotFoundError.named('Vector store', 'vs_unknown').body() },
  },
};

/** OpenAI's vector stores: each one is a collection. */
@ApiController('openai')
@Authenticated({ scope: 'documents:read', role: 'viewer' })
@Controller('v1/vector_stores')
export class VectorStoresController {
  constructor(private readonly stores: VectorStoresService) {}

  @Post()
  @Authenticated({ scope: 'documents:write', role: 'member' })
  @ApiOperation({ summary: 'Create a vector store (a collection), OpenAI-style' })
  @ApiCreatedResponse({ type: VectorStoreResponse })
  @ApiOpenAiErrors({
    409: {
      description: 'A collection of this name exists.',
      bodies: { duplicate: new ConflictError(duplicateName('Support tickets')).body() },
    },
  })
  async createVectorStore(@CurrentPrincipal() caller: Principal, @Body() body: CreateVectorStoreDto) {
    return presentVectorStore(
      await this.stores.create(caller, {
        name: body.name,
        description: body.description,
        metadata: body.metadata,
        fileIds: body.file_ids,
      }),
    );
  }

  @Get()
  @ApiOperation({ summary: 'List vector stores (collections), OpenAI-style, newest first by default' })
  @listQuery()
  @ApiOkResponse({ type: VectorStoreList })
  async listVectorStores(@CurrentPrincipal() caller: Principal, @Query() query: Record<string, unknown>) {
    return presentList(await this.stores.list(caller, windowOf(query)), presentVectorStore);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One vector store, OpenAI-style' })
  @STORE_ID()
  @ApiOkResponse({ type: VectorStoreResponse })
  @ApiOpenAiErrors(NO_STORE)
  async retrieveVectorStore(@CurrentPrincipal() caller: Principal, @Param('id') id: string) {
    return presentVectorStore(await this.stores.store(caller, id));
  }

  @Post(':id')
  @HttpCode(200)
  @Authenticated({ scope: 'documents:write', role: 'member' })
  @ApiOperation({ summary: "Change a vector store's name or metadata, OpenAI-style" })
  @STORE_ID()
  @ApiOkResponse({ type: VectorStoreResponse })
  @ApiOpenAiErrors(NO_STORE)
  async modifyVectorStore(
    @CurrentPrincipal() caller: Principal,
    @Param('id') id: string,
    @Body() body: UpdateVectorStoreDto,
  ) {
    return presentVectorStore(await this.stores.update(caller, id, { name: body.name, metadata: body.metadata }));
  }

  @Delete(':id')
  @Authenticated({ scope: 'documents:write', role: 'member' })
  @ApiOperation({ summary: 'Delete a vector store (the collection and its documents), OpenAI-style' })
  @STORE_ID()
  @ApiOkResponse({ type: DeletedResponse })
  @ApiOpenAiErrors({
    ...NO_STORE,
    409: {
      description: '`default` cannot be deleted.',
      bodies: { isDefault: new ConflictError(DEFAULT_NOT_DELETABLE).body() },
    },
  })
  async deleteVectorStore(@CurrentPrincipal() caller: Principal, @Param('id') id: string) {
    return { id: await this.stores.remove(caller, id), object: 'vector_store.deleted', deleted: true };
  }

  @Post(':id/files')
  @Authenticated({ scope: 'documents:write', role: 'member' })
  @ApiOperation({
    summary: 'Attach a file to a vector store: queued, then extracted, chunked and indexed',
    description:
      'Answers at once with `status: "in_progress"`, as OpenAI does; the file is then indexed (`completed`) or refused (`failed`, with `last_error` `{code, message}`) by the same extraction workers, limits and refusals as `POST /v1/documents/`. ' +
      "Poll `GET /v1/vector_stores/{id}/files/{fileId}` (its `openai-poll-after-ms` header says when) or use the client's `createAndPoll`. " +
      'Files are indexed in the order attached, at most 2 of one organization at once; at most 1,000 of an organization may wait (the next attach is a 429 with `Retry-After`). Attaching a file again replaces the earlier outcome.',
  })
  @STORE_ID()
  @ApiCreatedResponse({ type: VectorStoreFileResponse })
  @ApiOpenAiErrors({
    400: {
      description:
        "The organization's files and their attached copies would pass FILES_STORAGE_MB_PER_ORGANIZATION (nothing queued).",
      bodies: { storageFull: new AttachStorageFullError(1024).body() },
    },
    404: {
      description: 'No such vector store or file, or one this API key may not reach.',
      bodies: { unknown: NotFoundError.named('File', 'file_unknown').body() },
    },
  })
  async createVectorStoreFile(
    @CurrentPrincipal() caller: Principal,
    @Param('id') id: string,
    @Body() body: AttachFileDto,
  ) {
    return presentVectorStoreFile(await this.stores.attach(caller, id, body.file_id, body.attributes ?? {}));
  }

  @Get(':id/files')
  @ApiOperation({ summary: "A vector store's files, OpenAI-style" })
  @STORE_ID()
  @listQuery()
  @ApiQuery({
    name: 'filter',
    required: false,
    schema: { type: 'string', enum: FILE_STATUSES },
  })
  @ApiOkResponse({ type: VectorStoreFileList })
  @ApiOpenAiErrors({
    400: {
      description: "`filter` is not one of OpenAI's statuses.",
      bodies: { filter: ValidationFailedError.field('filter', `Must be one of ${FILE_STATUSES.join(', ')}.`).body() },
    },
    ...NO_STORE,
  })
  async listVectorStoreFiles(
    @CurrentPrincipal() caller: Principal,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
  ) {
    const status = query.filter === undefined ? undefined : query.filter;
    // OpenAI's statuses only (ours never cancel, so `cancelled` lists nothing): anything else is a 400.
    if (status !== undefined && !(typeof status === 'string' && FILE_STATUSES.includes(status)))
      throw ValidationFailedError.field('filter', `Must be one of ${FILE_STATUSES.join(', ')}.`);
    const window = windowOf({ ...query, filter: undefined });
    return presentList(await this.stores.attachments(caller, id, window, status), presentVectorStoreFile);
  }

  @Get(':id/files/:fileId')
  @ApiOperation({ summary: "One of a vector store's files, with its status" })
  @STORE_ID()
  @FILE_ID()
  @ApiOkResponse({
    type: VectorStoreFileResponse,
    headers: {
      'openai-poll-after-ms': {
        description: 'While the file is `in_progress`: milliseconds to wait before asking again.',
        schema: { type: 'string', pattern: '^[0-9]+$', maxLength: 6 },
      },
    },
  })
  @ApiOpenAiErrors(NO_STORE)
  async retrieveVectorStoreFile(
    @CurrentPrincipal() caller: Principal,
    @Param('id') id: string,
    @Param('fileId') fileId: string,
    @Res({ passthrough: true }) reply: HttpReply,
  ) {
    const attachment = await this.stores.attachment(caller, id, fileId);
    // OpenAI's hint to its clients' poll helpers (`createAndPoll` waits this long, else 5 s).
    if (attachment.status === 'in_progress') reply.header('openai-poll-after-ms', String(POLL_AFTER_MS));
    return presentVectorStoreFile(attachment);
  }

  @Delete(':id/files/:fileId')
  @Authenticated({ scope: 'documents:write', role: 'member' })
  @ApiOperation({ summary: 'Detach a file from a vector store (the document it became goes; the file stays)' })
  @STORE_ID()
  @FILE_ID()
  @ApiOkResponse({ type: DeletedResponse })
  @ApiOpenAiErrors(NO_STORE)
  async deleteVectorStoreFile(
    @CurrentPrincipal() caller: Principal,
    @Param('id') id: string,
    @Param('fileId') fileId: string,
  ) {
    return { id: await this.stores.detach(caller, id, fileId), object: 'vector_store.file.deleted', deleted: true };
  }

  @Post(':id/search')
  @HttpCode(200)
  @Authenticated({ scope: 'query', role: 'viewer' })
  @ApiOperation({
    summary: 'Search a vector store, OpenAI-style',
    description:
      "The passages `POST /v1/search/` would find in this collection, best first, in OpenAI's shape. Costs SEARCH_CREDIT_COST credits. A malformed `filters`: 400 in OpenAI's error shape.",
  })
  @STORE_ID()
  @ApiOkResponse({ type: VectorStoreSearchPage })
  @ApiOpenAiErrors({
    400: {
      description:
        '`query` missing, a malformed `filters`, `max_num_results` out of range, or a `ranking_options.score_threshold` below 0.',
      bodies: {
        filters: ValidationFailedError.field(
          'filters',
          '"archived": "eq" needs a string or a number (attributes are strings and numbers here).',
        ).body(),
      },
    },
    ...NO_STORE,
  })
  async searchVectorStore(
    @CurrentPrincipal() caller: Principal,
    @Param('id') id: string,
    @Body() body: SearchVectorStoreDto,
    @Res({ passthrough: true }) reply: HttpReply,
  ) {
    const { filter, problem } = metadataFilterOf(body.filters);
    if (problem) throw ValidationFailedError.field('filters', problem);
    const query = searchQueryText(body.query);
    const hits = await this.stores.search(caller, id, {
      query,
      filter,
      maxResults: body.max_num_results ?? 10,
      scoreThreshold: body.ranking_options?.score_threshold ?? null,
      signal: abortedWhenClientGoes(reply),
    });
    return presentSearch(query, hits);
  }
}

/** OpenAI's files: uploaded once, attached to vector stores. */
@ApiController('openai')
@Authenticated({ scope: 'documents:read', role: 'viewer' })
@Controller('v1/files')
export class FilesController {
  private readonly validation = new BodyValidationPipe();

  constructor(private readonly stores: VectorStoresService) {}

  @Post()
  @Authenticated({ scope: 'documents:write', role: 'member' })
  @UseInterceptors(DocumentUploadInterceptor)
  @ApiOperation({
    summary: 'Upload a file (multipart `file` and `purpose`), OpenAI-style',
    description:
      "Kept until deleted; attach it to a vector store to index it. Within MAX_UPLOAD_BYTES, and within the organization's FILES_STORAGE_MB_PER_ORGANIZATION of files in all.",
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({ type: FileUploadForm, required: true })
  @ApiCreatedResponse({ type: FileResponse })
  @ApiOpenAiErrors({
    400: {
      description:
        "`file` or `purpose` missing, or the organization's files would pass FILES_STORAGE_MB_PER_ORGANIZATION (nothing stored; delete files to upload more).",
      bodies: {
        file: ValidationFailedError.field('file', 'This field is required.').body(),
        storageFull: new FilesStorageFullError(1024).body(),
      },
    },
  })
  async createFile(
    @CurrentPrincipal() caller: Principal,
    @Body() body: Record<string, unknown>,
    @UploadedDocument() file?: Upload,
  ) {
    const fields = (await this.validation.transform(body, {
      type: 'body',
      metatype: FileUploadFieldsDto,
    })) as FileUploadFieldsDto;
    if (!file) throw ValidationFailedError.field('file', 'This field is required.');
    return presentFile(await this.stores.upload(caller, file, fields.purpose));
  }

  @Get()
  @ApiOperation({ summary: "The organization's files, OpenAI-style, newest first by default" })
  @listQuery()
  @ApiQuery({ name: 'purpose', required: false, schema: { type: 'string', maxLength: 50 } })
  @ApiOkResponse({ type: FileList })
  async listFiles(@CurrentPrincipal() caller: Principal, @Query() query: Record<string, unknown>) {
    const purpose = typeof query.purpose === 'string' ? query.purpose : undefined;
    return presentList(
      await this.stores.files(caller, windowOf({ ...query, purpose: undefined }), purpose),
      presentFile,
    );
  }

  @Get(':fileId')
  @ApiOperation({ summary: 'One file, OpenAI-style' })
  @FILE_ID()
  @ApiOkResponse({ type: FileResponse })
  @ApiOpenAiErrors({
    404: { description: 'No such file.', bodies: { unknown: NotFoundError.named('File', 'file_x').body() } },
  })
  async retrieveFile(@CurrentPrincipal() caller: Principal, @Param('fileId') fileId: string) {
    if (!isUuid(fileId)) throw NotFoundError.named('File', fileId);
    return presentFile(await this.stores.file(caller, fileId));
  }

  @Get(':fileId/content')
  @ApiOperation({
    summary: "A file's bytes, as uploaded (OpenAI's `files.content()`)",
    description:
      'Sent as `application/octet-stream`, as an attachment named after the file (never rendered by a browser, whatever the file holds).',
  })
  @FILE_ID()
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({
    description: 'The bytes.',
    // At most MAX_UPLOAD_BYTES (10 MB by default), as the upload.
    content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary', maxLength: 10_485_760 } } },
  })
  @ApiOpenAiErrors({
    404: {
      description: "No such file, another organization's, or one this API key may not reach.",
      bodies: { unknown: NotFoundError.named('File', 'file_x').body() },
    },
  })
  async retrieveFileContent(@CurrentPrincipal() caller: Principal, @Param('fileId') fileId: string) {
    const { file, content } = await this.stores.fileWithContent(caller, fileId);
    return new StreamableFile(content, {
      type: 'application/octet-stream',
      length: content.length,
      disposition: `attachment; filename*=UTF-8''${rfc5987(file.filename)}`,
    });
  }

  @Delete(':fileId')
  @Authenticated({ scope: 'documents:write', role: 'member' })
  @ApiOperation({ summary: 'Delete a file, and the documents it became in every vector store' })
  @FILE_ID()
  @ApiOkResponse({ type: DeletedResponse })
  @ApiOpenAiErrors({
    404: { description: 'No such file.', bodies: { unknown: NotFoundError.named('File', 'file_x').body() } },
  })
  async deleteFile(@CurrentPrincipal() caller: Principal, @Param('fileId') fileId: string) {
    if (!isUuid(fileId)) throw NotFoundError.named('File', fileId);
    return { id: await this.stores.deleteFile(caller, fileId), object: 'file', deleted: true };
  }
}
